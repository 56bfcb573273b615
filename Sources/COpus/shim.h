/* libopus, as Debian's libopus-dev installs it: the voice decoder (CVoiceDecode) decodes every
   packet of a voice message with it. Nothing is vendored. */
#include <opus.h>
