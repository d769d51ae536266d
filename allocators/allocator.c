/* allocator.c: what all strategies share out of line. */
#include "allocator.h"
#include <string.h>

void am_options_default(am_options *o) {
    memset(o, 0, sizeof *o);
}
