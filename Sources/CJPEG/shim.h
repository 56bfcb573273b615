/* libjpeg-turbo's libjpeg API, as Debian's libjpeg-dev (libjpeg62-turbo-dev) installs it: the
   photo decoder (CPhotoDecode) reads JPEGs whole with it. jpeglib.h needs stdio.h first. */
#include <stdio.h>
#include <jpeglib.h>
#include <jerror.h>
