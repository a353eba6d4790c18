/* export_otlp.h — a snapshot as OpenTelemetry's profiles signal (OTLP, the v1development schema):
 * an ExportProfilesServiceRequest, written to a file (-f otlp) or pushed to a collector
 * (otlp_push.h). */
#ifndef PROFTOP_EXPORT_OTLP_H
#define PROFTOP_EXPORT_OTLP_H

#include "proftop/export_walk.h"
#include "proftop/pbenc.h"
#include "proftop/snapshot.h"

/* What the request says of where it comes from. */
struct otlp_origin {
	const char *service;        /* service.name; NULL: the first process's name */
	const char *host;           /* host.name; NULL: this machine's */
};

/* The ExportProfilesServiceRequest of the scope of s, appended to out: a ResourceProfiles per
 * process (process.pid, process.executable.name, service.name, host.name), a Profile per sample
 * type, and the dictionary they share. */
void otlp_encode(struct pb *out, const struct snapshot *s, const struct export_scope *scope,
		 const struct otlp_origin *origin);

/* The service name -f otlp files carry (NULL: the first process's name); a copy is kept. */
void export_otlp_set_service(const char *service);

#endif
