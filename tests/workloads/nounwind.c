/* nounwind.c — split.c built without .eh_frame for its own code (see nounwind.flags): only
 * .debug_frame describes its frames, so the unwinder must use that. */
#include "split.c"
