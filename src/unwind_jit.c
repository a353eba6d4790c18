/* unwind_jit.c — JIT code's epilogues read from their bytes (unwind_jit.h). x86-64 encodings:
 * add $imm8/$imm32,%rsp (48 83 c4 ib, 48 81 c4 id), pop %reg (58+r, 41 58+r), nop (90, and
 * 66 90 / 0f 1f /0 forms), ret (c3, c2 iw: its immediate pops after the return address). */
#include "proftop/unwind_jit.h"

#include <string.h>

#define MAX_WORDS 64

/* The length of a multi-byte nop at code (0: none): 66 90, 0f 1f 00, 0f 1f 40 ib, 0f 1f 44 00 ib. */
static size_t nop_length(const uint8_t *code, size_t len)
{
	if (len >= 2 && code[0] == 0x66 && code[1] == 0x90)
		return 2;
	if (len >= 3 && code[0] == 0x0f && code[1] == 0x1f && code[2] == 0x00)
		return 3;
	if (len >= 4 && code[0] == 0x0f && code[1] == 0x1f && code[2] == 0x40)
		return 4;
	if (len >= 5 && code[0] == 0x0f && code[1] == 0x1f && code[2] == 0x44 && code[3] == 0x00)
		return 5;
	return 0;
}

bool unwind_jit_epilogue(const uint8_t *code, size_t len, struct unwind_jit_exit *out)
{
	uint64_t bytes = 0;        /* added to rsp so far */
	size_t at = 0, n;

	out->rbp_word = -1;
	out->pops_others = false;
	while (at < len && bytes / 8 <= MAX_WORDS) {
		const uint8_t *c = code + at;
		size_t left = len - at;

		if (c[0] == 0xc3 || (c[0] == 0xc2 && left >= 3)) {
			if (bytes % 8)
				return false;
			out->words = (unsigned)(bytes / 8);
			return true;
		} else if (left >= 4 && c[0] == 0x48 && c[1] == 0x83 && c[2] == 0xc4) {
			if (c[3] & 0x80) /* a negative add: the stack grows again */
				return false;
			bytes += c[3];
			at += 4;
		} else if (left >= 7 && c[0] == 0x48 && c[1] == 0x81 && c[2] == 0xc4) {
			uint32_t imm;

			memcpy(&imm, c + 3, sizeof(imm));
			if (imm > 8 * MAX_WORDS)
				return false;
			bytes += imm;
			at += 7;
		} else if (c[0] >= 0x58 && c[0] <= 0x5f) {
			if (c[0] == 0x5d) /* pop %rbp */
				out->rbp_word = (int)(bytes / 8);
			else
				out->pops_others = true;
			bytes += 8;
			at++;
		} else if (left >= 2 && c[0] == 0x41 && c[1] >= 0x58 && c[1] <= 0x5f) {
			out->pops_others = true;
			bytes += 8;
			at += 2;
		} else if (c[0] == 0x90) {
			at++;
		} else if ((n = nop_length(c, left))) {
			at += n;
		} else {
			return false;
		}
	}
	return false;
}
