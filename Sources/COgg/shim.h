/* libogg, as Debian's libogg-dev installs it: the voice decoder (CVoiceDecode) reads Ogg pages
   and packets with it. Nothing is vendored. */
#include <ogg/ogg.h>
