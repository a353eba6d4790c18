/* frames_perl.h — Perl's subs as a frame source of the resolver (resolver.h): the subs a perl
 * process is in, spliced into its native stacks inside the run loop (Perl_runops_standard),
 * each call of it with the run of subs it runs (perlframes.h says which).
 *
 * As with the Python frames (frames_python.h), they are read from the process's memory when the
 * resolver reaches the stack, milliseconds after the sample: the native stack is exact, the
 * Perl part is where the interpreter is at that later moment. Only the main interpreter is
 * read (PL_curinterp): the main thread's stacks get subs; the threads of `use threads` run
 * interpreters of their own and stay native. What shows that the read went wrong (a context
 * stack that does not read, more or fewer runs than the native stack has run loops) is
 * counted in unread(), never guessed at. */
#ifndef PROFTOP_FRAMES_PERL_H
#define PROFTOP_FRAMES_PERL_H

struct frame_source_ops;

extern const struct frame_source_ops frames_perl_ops;

#endif
