#include "photo_decode.h"

#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One decode's state. It is reached through a pointer in decode(), never as a local of the
   function that calls setjmp, so its values are defined after a longjmp. */
struct png_job {
    const uint8_t *bytes;
    size_t count;
    size_t at;
    /* The library asked for bytes past the end. */
    int cut;
    uint32_t max_side;
    uint64_t max_pixels;
    png_structp png;
    png_infop info;
    png_bytep row;
    imhost_photo_verdict verdict;
};

static void read_bytes(png_structp png, png_bytep out, size_t length) {
    struct png_job *job = png_get_io_ptr(png);
    if (length > job->count - job->at) {
        job->cut = 1;
        png_error(png, "the data ends early");
    }
    memcpy(out, job->bytes + job->at, length);
    job->at += length;
}

static void failed(png_structp png, png_const_charp message) {
    struct png_job *job = png_get_error_ptr(png);
    snprintf(job->verdict.detail, sizeof job->verdict.detail, "%s", message);
    png_longjmp(png, 1);
}

/* Warnings are for benign oddities (an sRGB profile libpng knows to be off, extra compressed
   data): a browser shows such a file, so it is taken, and nothing is printed. */
static void warned(png_structp png, png_const_charp message) {
    (void)png;
    (void)message;
}

static void decode(struct png_job *job) {
    if (setjmp(png_jmpbuf(job->png))) {
        job->verdict.code = job->cut ? IMHOST_PHOTO_TRUNCATED : IMHOST_PHOTO_CORRUPT;
        return;
    }
    png_set_read_fn(job->png, job, read_bytes);
    /* A bad checksum on any chunk, ancillary ones included, is damage. */
    png_set_crc_action(job->png, PNG_CRC_DEFAULT, PNG_CRC_ERROR_QUIT);
    png_set_user_limits(job->png, job->max_side, job->max_side);
    png_read_info(job->png, job->info);
    job->verdict.width = png_get_image_width(job->png, job->info);
    job->verdict.height = png_get_image_height(job->png, job->info);
    if ((uint64_t)job->verdict.width * job->verdict.height > job->max_pixels) {
        job->verdict.code = IMHOST_PHOTO_TOO_LARGE;
        return;
    }
    int passes = png_set_interlace_handling(job->png);
    png_read_update_info(job->png, job->info);
    job->row = malloc(png_get_rowbytes(job->png, job->info));
    if (!job->row) {
        job->verdict.code = IMHOST_PHOTO_TOO_LARGE;
        return;
    }
    for (int pass = 0; pass < passes; pass++) {
        for (uint32_t y = 0; y < job->verdict.height; y++) png_read_row(job->png, job->row, NULL);
    }
    /* The chunks after the image data, up to IEND, checksums included. */
    png_read_end(job->png, NULL);
    if (job->at < job->count) {
        job->verdict.code = IMHOST_PHOTO_TRAILING;
        job->verdict.trailing = job->count - job->at;
        return;
    }
    job->verdict.code = IMHOST_PHOTO_OK;
}

imhost_photo_verdict imhost_photo_decode_png(const uint8_t *bytes, size_t count, uint32_t max_side, uint64_t max_pixels) {
    struct png_job *job = calloc(1, sizeof *job);
    if (!job) return (imhost_photo_verdict){.code = IMHOST_PHOTO_TOO_LARGE};
    job->bytes = bytes;
    job->count = count;
    job->max_side = max_side;
    job->max_pixels = max_pixels;
    job->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, job, failed, warned);
    job->info = job->png ? png_create_info_struct(job->png) : NULL;
    if (job->info) {
        decode(job);
    } else {
        job->verdict.code = IMHOST_PHOTO_TOO_LARGE;
    }
    imhost_photo_verdict verdict = job->verdict;
    free(job->row);
    if (job->png) png_destroy_read_struct(&job->png, job->info ? &job->info : NULL, NULL);
    free(job);
    return verdict;
}
