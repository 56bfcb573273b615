#include "photo_decode.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <jpeglib.h>
#include <jerror.h>

/* The most scans a progressive JPEG may have: each scan is a pass over the whole image, so a
   small file of thousands of them costs minutes (libjpeg-turbo's own fuzzers stop at 500). */
#define SCAN_LIMIT 500
/* The most memory libjpeg may take for one image (a progressive one keeps every coefficient):
   a 40-million-pixel photo in full colour needs about 240 MB. */
#define MEMORY_LIMIT (320L * 1024 * 1024)

/* One decode's state. `errors` comes first, so libjpeg's `err` pointer is the job; it is
   reached through a pointer in decode(), so its values are defined after a longjmp. */
struct jpeg_job {
    struct jpeg_error_mgr errors;
    struct jpeg_progress_mgr progress;
    struct jpeg_decompress_struct cinfo;
    jmp_buf jump;
    int created;
    uint32_t max_side;
    uint64_t max_pixels;
    imhost_photo_verdict verdict;
};

static int32_t code_of_error(int message) {
    switch (message) {
    case JERR_INPUT_EOF:
    case JERR_INPUT_EMPTY:
        return IMHOST_PHOTO_TRUNCATED;
    case JERR_OUT_OF_MEMORY:
    case JERR_NO_BACKING_STORE:
    case JERR_IMAGE_TOO_BIG:
    case JERR_WIDTH_OVERFLOW:
        return IMHOST_PHOTO_TOO_LARGE;
    case JERR_BAD_PRECISION:
    case JERR_NOT_COMPILED:
    case JERR_NOTIMPL:
    case JERR_ARITH_NOTIMPL:
    case JERR_CONVERSION_NOTIMPL:
    case JERR_SOF_UNSUPPORTED:
    case JERR_EMPTY_IMAGE:
        return IMHOST_PHOTO_UNSUPPORTED;
    default:
        return IMHOST_PHOTO_CORRUPT;
    }
}

static void stop(j_common_ptr cinfo, int32_t code) {
    struct jpeg_job *job = (struct jpeg_job *)cinfo->err;
    job->verdict.code = code;
    (*cinfo->err->format_message)(cinfo, job->verdict.detail);
    longjmp(job->jump, 1);
}

static void failed(j_common_ptr cinfo) {
    stop(cinfo, code_of_error(cinfo->err->msg_code));
}

/* libjpeg goes on past damage with a warning (a bad Huffman code, data cut short: it fills the
   rest with grey), where a browser would show a broken picture: such a warning stops the decode.
   A JFIF version it does not know and an Adobe transform code it ignores are not damage. */
static void said(j_common_ptr cinfo, int level) {
    if (level >= 0) return;
    int message = cinfo->err->msg_code;
    if (message == JWRN_JFIF_MAJOR || message == JWRN_ADOBE_XFORM) return;
    stop(cinfo, message == JWRN_JPEG_EOF ? IMHOST_PHOTO_TRUNCATED : IMHOST_PHOTO_CORRUPT);
}

static void progressed(j_common_ptr cinfo) {
    struct jpeg_job *job = (struct jpeg_job *)cinfo->err;
    if (job->cinfo.input_scan_number > SCAN_LIMIT) {
        job->verdict.code = IMHOST_PHOTO_UNSUPPORTED;
        snprintf(job->verdict.detail, sizeof job->verdict.detail, "more than %d progressive scans", SCAN_LIMIT);
        longjmp(job->jump, 1);
    }
}

static void decode(struct jpeg_job *job, const uint8_t *bytes, size_t count) {
    if (setjmp(job->jump)) return;
    struct jpeg_decompress_struct *cinfo = &job->cinfo;
    cinfo->err = jpeg_std_error(&job->errors);
    job->errors.error_exit = failed;
    job->errors.emit_message = said;
    jpeg_create_decompress(cinfo);
    job->created = 1;
    cinfo->mem->max_memory_to_use = MEMORY_LIMIT;
    job->progress.progress_monitor = progressed;
    cinfo->progress = &job->progress;
    jpeg_mem_src(cinfo, bytes, (unsigned long)count);
    jpeg_read_header(cinfo, TRUE);
    job->verdict.width = cinfo->image_width;
    job->verdict.height = cinfo->image_height;
    if (cinfo->image_width > job->max_side || cinfo->image_height > job->max_side
        || (uint64_t)cinfo->image_width * cinfo->image_height > job->max_pixels) {
        job->verdict.code = IMHOST_PHOTO_TOO_LARGE;
        return;
    }
    /* Every coefficient is still decoded; only the last steps, which cannot fail, are cheaper. */
    cinfo->dct_method = JDCT_IFAST;
    cinfo->do_fancy_upsampling = FALSE;
    jpeg_start_decompress(cinfo);
    JSAMPARRAY row = (*cinfo->mem->alloc_sarray)((j_common_ptr)cinfo, JPOOL_IMAGE,
                                                 cinfo->output_width * cinfo->output_components, 1);
    while (cinfo->output_scanline < cinfo->output_height) jpeg_read_scanlines(cinfo, row, 1);
    /* Reads on to EOI; what is left in the buffer after it is not part of the picture. */
    jpeg_finish_decompress(cinfo);
    if (cinfo->src->bytes_in_buffer > 0) {
        job->verdict.code = IMHOST_PHOTO_TRAILING;
        job->verdict.trailing = cinfo->src->bytes_in_buffer;
        return;
    }
    job->verdict.code = IMHOST_PHOTO_OK;
}

imhost_photo_verdict imhost_photo_decode_jpeg(const uint8_t *bytes, size_t count, uint32_t max_side, uint64_t max_pixels) {
    struct jpeg_job *job = calloc(1, sizeof *job);
    if (!job) return (imhost_photo_verdict){.code = IMHOST_PHOTO_TOO_LARGE};
    job->max_side = max_side;
    job->max_pixels = max_pixels;
    decode(job, bytes, count);
    imhost_photo_verdict verdict = job->verdict;
    if (job->created) jpeg_destroy_decompress(&job->cinfo);
    free(job);
    return verdict;
}
