/* libpng, as Debian's libpng-dev installs it: the photo decoder (CPhotoDecode) reads PNGs whole
   with it. Nothing is vendored. */
#include <png.h>
