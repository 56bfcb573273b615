/*
 * A voice recording decoded whole, every Opus packet, by libopus, for the host's media decoder
 * child (`imhost __decode-photo`): nothing else runs in that process, so a library's bug costs
 * the recording it was decoding, never a chat.
 *
 * Two containers carry Opus: WebM (what Chromium's MediaRecorder writes; read here by a small
 * EBML reader, as no library for it is packaged small) and Ogg (read with libogg). The length is
 * the sum of the samples libopus decoded, less the stream's pre-skip: never what the file says.
 */
#ifndef IMHOST_VOICE_DECODE_H
#define IMHOST_VOICE_DECODE_H

#include <stddef.h>
#include <stdint.h>

/* What decoding found. */
enum {
    /* Every packet decoded, and the file ends where its last element or page does. */
    IMHOST_VOICE_OK = 0,
    /* The data ends inside an element or a page. */
    IMHOST_VOICE_TRUNCATED = 1,
    /* A broken structure, or a packet libopus refuses. */
    IMHOST_VOICE_CORRUPT = 2,
    /* Longer than the limit given. */
    IMHOST_VOICE_TOO_LONG = 3,
    /* Not Opus, more than one track or stream, more than two channels, laced blocks. */
    IMHOST_VOICE_UNSUPPORTED = 4,
    /* Bytes after the last page (Ogg), or an element that runs past the end of a sized parent. */
    IMHOST_VOICE_TRAILING = 5,
};

typedef struct {
    int32_t code;
    /* Samples at 48 kHz decoded, less the pre-skip. */
    uint64_t samples;
    /* How many Opus packets were decoded. */
    uint32_t packets;
    /* For IMHOST_VOICE_TRAILING: how many bytes follow the recording's end. */
    uint64_t trailing;
    /* The reader's or the library's words for a failure (NUL-terminated), or empty. */
    char detail[160];
} imhost_voice_verdict;

/* Each decodes `count` bytes whole; more than `max_samples` decoded samples (at 48 kHz) is
   IMHOST_VOICE_TOO_LONG, found as soon as it is passed. */
imhost_voice_verdict imhost_voice_decode_webm(const uint8_t *bytes, size_t count, uint64_t max_samples);
imhost_voice_verdict imhost_voice_decode_ogg(const uint8_t *bytes, size_t count, uint64_t max_samples);

#endif
