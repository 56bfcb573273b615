/* The ABI is a header only; SwiftPM needs one source file to make it a target. */
#include "imkit_plugin.h"
