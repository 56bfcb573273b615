/*
 * WebM (a Matroska profile, EBML underneath) read for its one Opus track: the elements are
 * walked in order, masters entered, everything else skipped by its size; the track's OpusHead
 * opens a decoder and every block's frame is decoded. Chromium's MediaRecorder writes the
 * Segment and its Clusters with an unknown size (it streams), so those may say none.
 */
#include "opus_stream.h"

#include <stdio.h>
#include <string.h>

#define ID_EBML 0x1A45DFA3u
#define ID_DOCTYPE 0x4282u
#define ID_SEGMENT 0x18538067u
#define ID_CLUSTER 0x1F43B675u
#define ID_TRACKS 0x1654AE6Bu
#define ID_TRACK_ENTRY 0xAEu
#define ID_TRACK_NUMBER 0xD7u
#define ID_CODEC_ID 0x86u
#define ID_CODEC_PRIVATE 0x63A2u
#define ID_CONTENT_ENCODINGS 0x6D80u
#define ID_BLOCK_GROUP 0xA0u
#define ID_BLOCK 0xA1u
#define ID_SIMPLE_BLOCK 0xA3u

#define UNKNOWN_SIZE UINT64_MAX
#define DEPTH 16

/* A variable-length integer at `at`: its value (with the length marker kept for an id, taken
   off for a size) and its length; 0 when the bytes end first or the first byte is 0. */
static size_t vint(const uint8_t *bytes, size_t count, size_t at, int keep_marker, uint64_t *value) {
    if (at >= count || bytes[at] == 0) return 0;
    size_t length = 1;
    while (!(bytes[at] & (0x80 >> (length - 1)))) length++;
    if (at + length > count) return 0;
    uint64_t v = keep_marker ? bytes[at] : (bytes[at] & (0xFF >> length));
    int all_ones = v == (uint64_t)(0xFF >> length);
    for (size_t i = 1; i < length; i++) {
        v = v << 8 | bytes[at + i];
        if (bytes[at + i] != 0xFF) all_ones = 0;
    }
    *value = (!keep_marker && all_ones) ? UNKNOWN_SIZE : v;
    return length;
}

static int is_master(uint64_t id) {
    return id == ID_EBML || id == ID_SEGMENT || id == ID_CLUSTER || id == ID_TRACKS || id == ID_TRACK_ENTRY || id == ID_BLOCK_GROUP;
}

imhost_voice_verdict imhost_voice_decode_webm(const uint8_t *bytes, size_t count, uint64_t max_samples) {
    imhost_voice_verdict verdict;
    memset(&verdict, 0, sizeof verdict);
    imhost_opus_stream stream;
    memset(&stream, 0, sizeof stream);
    size_t ends[DEPTH];
    int depth = 0;
    int tracks = 0, opened = 0, saw_header = 0, webm = 0;
    uint64_t track = 0;
    char codec[32] = "";
    const uint8_t *head = NULL;
    size_t head_count = 0;
    size_t at = 0, segment_end = 0;
    int code = IMHOST_VOICE_OK;

    while (code == IMHOST_VOICE_OK && at < count) {
        while (depth > 0 && ends[depth - 1] == at) depth--;
        if (segment_end && at >= segment_end) {
            code = IMHOST_VOICE_TRAILING;
            verdict.trailing = count - at;
            IMHOST_VOICE_SAY(&verdict, "%zu bytes follow its segment", count - at);
            break;
        }
        uint64_t id = 0, size = 0;
        size_t id_length = vint(bytes, count, at, 1, &id);
        size_t size_length = id_length ? vint(bytes, count, at + id_length, 0, &size) : 0;
        if (!id_length || !size_length) {
            code = at + 12 > count ? IMHOST_VOICE_TRUNCATED : IMHOST_VOICE_CORRUPT;
            IMHOST_VOICE_SAY(&verdict, "its element at byte %zu is %s", at, code == IMHOST_VOICE_TRUNCATED ? "cut short" : "not EBML");
            break;
        }
        size_t body = at + id_length + size_length;
        if (!saw_header && id != ID_EBML) {
            code = IMHOST_VOICE_CORRUPT;
            IMHOST_VOICE_SAY(&verdict, "it does not start with an EBML header");
            break;
        }
        saw_header = 1;
        if (size == UNKNOWN_SIZE) {
            if (id != ID_SEGMENT && id != ID_CLUSTER) {
                code = IMHOST_VOICE_CORRUPT;
                IMHOST_VOICE_SAY(&verdict, "element 0x%llX at byte %zu has no size", (unsigned long long)id, at);
                break;
            }
            at = body;
            continue;
        }
        if (size > count - body) {
            code = IMHOST_VOICE_TRUNCATED;
            IMHOST_VOICE_SAY(&verdict, "element 0x%llX at byte %zu runs past the end", (unsigned long long)id, at);
            break;
        }
        size_t end = body + (size_t)size;
        if (depth > 0 && end > ends[depth - 1]) {
            code = IMHOST_VOICE_CORRUPT;
            IMHOST_VOICE_SAY(&verdict, "element 0x%llX at byte %zu runs past its parent", (unsigned long long)id, at);
            break;
        }
        if (is_master(id)) {
            if (depth == DEPTH) {
                code = IMHOST_VOICE_CORRUPT;
                IMHOST_VOICE_SAY(&verdict, "its elements nest more than %d deep", DEPTH);
                break;
            }
            if (id == ID_TRACK_ENTRY && ++tracks > 1) {
                code = IMHOST_VOICE_UNSUPPORTED;
                IMHOST_VOICE_SAY(&verdict, "it has more than one track");
                break;
            }
            if (id == ID_SEGMENT && depth == 0) segment_end = end;
            ends[depth++] = end;
            at = body;
            continue;
        }
        switch (id) {
        case ID_DOCTYPE:
            webm = (size == 4 && memcmp(bytes + body, "webm", 4) == 0) || (size == 8 && memcmp(bytes + body, "matroska", 8) == 0);
            if (!webm) {
                code = IMHOST_VOICE_UNSUPPORTED;
                IMHOST_VOICE_SAY(&verdict, "its EBML document is not WebM or Matroska");
            }
            break;
        case ID_TRACK_NUMBER:
            track = 0;
            for (size_t i = 0; i < size && i < 8; i++) track = track << 8 | bytes[body + i];
            break;
        case ID_CODEC_ID: {
            size_t n = size < sizeof codec - 1 ? (size_t)size : sizeof codec - 1;
            memcpy(codec, bytes + body, n);
            codec[n] = 0;
            break;
        }
        case ID_CODEC_PRIVATE:
            head = bytes + body;
            head_count = (size_t)size;
            break;
        case ID_CONTENT_ENCODINGS:
            code = IMHOST_VOICE_UNSUPPORTED;
            IMHOST_VOICE_SAY(&verdict, "its track is compressed or encrypted");
            break;
        case ID_BLOCK:
        case ID_SIMPLE_BLOCK: {
            if (!opened) {
                if (!webm || tracks != 1 || strcmp(codec, "A_OPUS") != 0) {
                    code = IMHOST_VOICE_UNSUPPORTED;
                    IMHOST_VOICE_SAY(&verdict, "its track is not Opus (codec \"%.20s\")", codec);
                    break;
                }
                code = imhost_opus_open(&stream, head, head_count, max_samples, &verdict);
                if (code != IMHOST_VOICE_OK) break;
                opened = 1;
            }
            uint64_t number = 0;
            size_t length = vint(bytes, end, body, 0, &number);
            if (!length || body + length + 3 > end) {
                code = IMHOST_VOICE_CORRUPT;
                IMHOST_VOICE_SAY(&verdict, "a block at byte %zu is cut short", at);
                break;
            }
            if (number != track) {
                code = IMHOST_VOICE_CORRUPT;
                IMHOST_VOICE_SAY(&verdict, "a block at byte %zu is of track %llu, not %llu", at, (unsigned long long)number,
                                 (unsigned long long)track);
                break;
            }
            uint8_t flags = bytes[body + length + 2];
            if (flags & 0x06) {
                code = IMHOST_VOICE_UNSUPPORTED;
                IMHOST_VOICE_SAY(&verdict, "a block at byte %zu is laced", at);
                break;
            }
            size_t frame = body + length + 3;
            code = imhost_opus_packet(&stream, bytes + frame, end - frame, &verdict);
            break;
        }
        default:
            break;
        }
        at = end;
    }
    if (code == IMHOST_VOICE_OK && !opened) {
        code = saw_header ? IMHOST_VOICE_CORRUPT : IMHOST_VOICE_TRUNCATED;
        IMHOST_VOICE_SAY(&verdict, "it holds no sound");
    }
    if (opened) imhost_opus_close(&stream, &verdict);
    verdict.code = code;
    return verdict;
}
