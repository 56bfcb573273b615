/* libwebp's decoder, as Debian's libwebp-dev installs it: the photo decoder (CPhotoDecode)
   reads WebPs whole with it. */
#include <webp/decode.h>
