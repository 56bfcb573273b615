/* libjpeg-turbo's libjpeg API, as Debian's libjpeg-dev (libjpeg62-turbo-dev) installs it: the
   photo decoder (CPhotoDecode) reads JPEGs whole with it. This API rather than TurboJPEG's
   (libturbojpeg0-dev): it says where decoding stopped (the bytes left after EOI, which must be
   none), lets a warning about damage stop the decode, and bounds memory and progressive scans.
   jpeglib.h needs stdio.h first. */
#include <stdio.h>
#include <jpeglib.h>
#include <jerror.h>
