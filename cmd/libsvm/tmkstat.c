// Tmk_stat has a file of its own: the archive member holding it is linked
// only into programs that use it, and libsvm refers to it weakly, so only
// those programs pay for the round trip that brings it up to date.
#include "Tmk.h"

struct Tmk_stat Tmk_stat;
