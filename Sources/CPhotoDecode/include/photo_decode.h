/*
 * A photo decoded whole, every pixel row, by the platform's libraries (libpng, libjpeg-turbo,
 * libwebp), for the host's photo decoder child (`imhost __decode-photo`): nothing else runs in
 * that process, so a library's bug costs the photo it was decoding, never a chat.
 *
 * libpng and libjpeg report errors by longjmp from their callbacks. Each function here keeps
 * that inside its own C frames: it sets its jump point, runs the library, and returns a verdict;
 * no jump ever crosses a Swift frame. The pixels are not kept: one row at a time goes into a
 * buffer of the row's size (the whole image for WebP, whose decoder has no row API), after the
 * header's size was checked against the limits given, so a file that says it is huge is refused
 * before anything is allocated for it.
 */
#ifndef IMHOST_PHOTO_DECODE_H
#define IMHOST_PHOTO_DECODE_H

#include <stddef.h>
#include <stdint.h>

/* What decoding found. */
enum {
    /* Every row decoded, and the file ends where the picture does. */
    IMHOST_PHOTO_OK = 0,
    /* The data ends before the picture does. */
    IMHOST_PHOTO_TRUNCATED = 1,
    /* The library found damage: a bad checksum, a bad code, a broken structure. */
    IMHOST_PHOTO_CORRUPT = 2,
    /* More pixels or memory than the limits allow. */
    IMHOST_PHOTO_TOO_LARGE = 3,
    /* A feature the library does not decode (12-bit JPEG, an animated WebP). */
    IMHOST_PHOTO_UNSUPPORTED = 4,
    /* Bytes after the picture's end: after PNG's IEND, JPEG's EOI, or the RIFF size of a WebP. */
    IMHOST_PHOTO_TRAILING = 5,
};

typedef struct {
    int32_t code;
    uint32_t width;
    uint32_t height;
    /* For IMHOST_PHOTO_TRAILING: how many bytes follow the picture's end. */
    uint64_t trailing;
    /* The library's own words for a failure (NUL-terminated), or empty. */
    char detail[160];
} imhost_photo_verdict;

/* Each decodes `count` bytes whole. A picture wider or taller than `max_side`, or of more than
   `max_pixels` pixels, is IMHOST_PHOTO_TOO_LARGE before its pixels are decoded. */
imhost_photo_verdict imhost_photo_decode_png(const uint8_t *bytes, size_t count, uint32_t max_side, uint64_t max_pixels);
imhost_photo_verdict imhost_photo_decode_jpeg(const uint8_t *bytes, size_t count, uint32_t max_side, uint64_t max_pixels);
imhost_photo_verdict imhost_photo_decode_webp(const uint8_t *bytes, size_t count, uint32_t max_side, uint64_t max_pixels);

/* Limits this process's address space (RLIMIT_AS) to what it maps now plus `budget` bytes: an
   allocation past that fails, and the library reports it, where a crafted file would otherwise
   take the machine's memory. Returns 0, or -1 with errno set. */
int imhost_photo_limit_memory(uint64_t budget);

/* Sets this process's CPU time limit (RLIMIT_CPU's soft limit, which the kernel enforces with
   SIGXCPU) to what it used so far plus `seconds`: called before each photo, it ends a decode
   that runs away even when no parent is left to kill it. Returns 0, or -1 with errno set. */
int imhost_photo_limit_cpu(unsigned seconds);

#endif
