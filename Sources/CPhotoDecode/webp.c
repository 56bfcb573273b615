#include "photo_decode.h"

#include <stdio.h>
#include <string.h>
#include <webp/decode.h>

static uint32_t little_endian(const uint8_t *at) {
    return (uint32_t)at[0] | (uint32_t)at[1] << 8 | (uint32_t)at[2] << 16 | (uint32_t)at[3] << 24;
}

static int32_t code_of_status(VP8StatusCode status) {
    switch (status) {
    case VP8_STATUS_OK: return IMHOST_PHOTO_OK;
    case VP8_STATUS_NOT_ENOUGH_DATA: return IMHOST_PHOTO_TRUNCATED;
    case VP8_STATUS_OUT_OF_MEMORY: return IMHOST_PHOTO_TOO_LARGE;
    case VP8_STATUS_UNSUPPORTED_FEATURE: return IMHOST_PHOTO_UNSUPPORTED;
    default: return IMHOST_PHOTO_CORRUPT;
    }
}

static imhost_photo_verdict failed(int32_t code, const char *detail) {
    imhost_photo_verdict verdict = {.code = code};
    snprintf(verdict.detail, sizeof verdict.detail, "%s", detail);
    return verdict;
}

/* libwebp reads a RIFF file up to its image data and ignores what follows the RIFF size, so the
   container is walked here first: the RIFF size must end where the file does, and its chunks
   must fill it exactly. */
imhost_photo_verdict imhost_photo_decode_webp(const uint8_t *bytes, size_t count, uint32_t max_side, uint64_t max_pixels) {
    if (count < 20 || memcmp(bytes, "RIFF", 4) != 0 || memcmp(bytes + 8, "WEBP", 4) != 0) {
        return failed(IMHOST_PHOTO_CORRUPT, "no RIFF WEBP header");
    }
    uint64_t end = (uint64_t)little_endian(bytes + 4) + 8;
    if (end > count) return failed(IMHOST_PHOTO_TRUNCATED, "the RIFF size is more than the file");
    if (end < count) {
        imhost_photo_verdict verdict = {.code = IMHOST_PHOTO_TRAILING, .trailing = count - end};
        return verdict;
    }
    for (uint64_t at = 12; at < end;) {
        if (end - at < 8) return failed(IMHOST_PHOTO_CORRUPT, "a chunk header is cut short");
        uint64_t size = little_endian(bytes + at + 4);
        uint64_t next = at + 8 + size + (size & 1);
        /* The last chunk's padding byte may be missing. */
        if (next > end && at + 8 + size != end) return failed(IMHOST_PHOTO_CORRUPT, "a chunk goes past the RIFF size");
        at = next;
    }

    WebPBitstreamFeatures features;
    VP8StatusCode status = WebPGetFeatures(bytes, count, &features);
    if (status != VP8_STATUS_OK) return failed(code_of_status(status), "its header");
    imhost_photo_verdict verdict = {.width = (uint32_t)features.width, .height = (uint32_t)features.height};
    if (features.has_animation) {
        verdict.code = IMHOST_PHOTO_UNSUPPORTED;
        snprintf(verdict.detail, sizeof verdict.detail, "an animation");
        return verdict;
    }
    if (verdict.width > max_side || verdict.height > max_side || (uint64_t)verdict.width * verdict.height > max_pixels) {
        verdict.code = IMHOST_PHOTO_TOO_LARGE;
        return verdict;
    }
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) return failed(IMHOST_PHOTO_UNSUPPORTED, "libwebp's version");
    config.output.colorspace = features.has_alpha ? MODE_RGBA : MODE_RGB;
    status = WebPDecode(bytes, count, &config);
    WebPFreeDecBuffer(&config.output);
    /* The container is whole by now: image data that runs out is damaged, not cut short. */
    verdict.code = status == VP8_STATUS_NOT_ENOUGH_DATA ? IMHOST_PHOTO_CORRUPT : code_of_status(status);
    if (status != VP8_STATUS_OK) snprintf(verdict.detail, sizeof verdict.detail, "its image data");
    return verdict;
}
