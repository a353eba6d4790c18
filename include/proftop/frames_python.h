/* frames_python.h — CPython's frames as a frame source of the resolver (resolver.h): the Python
 * functions a process runs, spliced into its native stacks inside the interpreter's evaluation
 * function (_PyEval_EvalFrameDefault), each evaluation with the run of frames it runs.
 *
 * The frames are read from the process's memory (pyframes.h) when the resolver reaches the
 * first evaluation of a stack: after the sample, by the time its record went through the ring
 * (milliseconds; more when the collector falls behind). The native stack is exact, the Python
 * part is the thread's frames at that later moment: exact for a thread still in the same
 * functions (the common case in a hot loop), wrong for one that moved on. What shows that it
 * moved (a chain that no longer reads, fewer or more runs than the native stack has
 * evaluations) is counted, never guessed at: frames_python_unread(). Statistically the shares
 * hold; a single sample may be off. */
#ifndef PROFTOP_FRAMES_PYTHON_H
#define PROFTOP_FRAMES_PYTHON_H

struct frame_source_ops;

/* Its unread() counts the stacks whose Python frames could not be read consistently (see the
 * file comment). */
extern const struct frame_source_ops frames_python_ops;

#endif
