#include "opus_stream.h"

#include <stdio.h>
#include <string.h>

/* The most samples one Opus packet decodes to a channel: 120 ms at 48 kHz. */
#define MAX_FRAME 5760

int imhost_opus_open(imhost_opus_stream *stream, const uint8_t *head, size_t count, uint64_t max_samples,
                     imhost_voice_verdict *verdict) {
    memset(stream, 0, sizeof *stream);
    if (count < 19 || memcmp(head, "OpusHead", 8) != 0) {
        IMHOST_VOICE_SAY(verdict, "its Opus header (OpusHead) is missing or short");
        return IMHOST_VOICE_CORRUPT;
    }
    if ((head[8] >> 4) != 0) {
        IMHOST_VOICE_SAY(verdict, "its Opus header is of version %u", head[8]);
        return IMHOST_VOICE_UNSUPPORTED;
    }
    int channels = head[9];
    int family = head[18];
    if (channels < 1 || channels > 2 || family != 0) {
        IMHOST_VOICE_SAY(verdict, "it has %d channels (mapping family %d); a voice message has one or two", channels, family);
        return IMHOST_VOICE_UNSUPPORTED;
    }
    int error = OPUS_OK;
    stream->decoder = opus_decoder_create(48000, channels, &error);
    if (!stream->decoder || error != OPUS_OK) {
        IMHOST_VOICE_SAY(verdict, "libopus: %s", opus_strerror(error));
        return IMHOST_VOICE_CORRUPT;
    }
    stream->channels = channels;
    stream->pre_skip = (uint32_t)head[10] | (uint32_t)head[11] << 8;
    stream->max_samples = max_samples;
    return IMHOST_VOICE_OK;
}

int imhost_opus_packet(imhost_opus_stream *stream, const uint8_t *packet, size_t count, imhost_voice_verdict *verdict) {
    opus_int16 pcm[MAX_FRAME * 2];
    /* libopus checks a packet's size against its frames itself (a 120 ms packet at a high rate
       is larger than 60 ms's 3 × 1275 bytes); only what it cannot be given is refused here. */
    if (count == 0 || count > INT32_MAX) {
        IMHOST_VOICE_SAY(verdict, "packet %u is %zu bytes", verdict->packets + 1, count);
        return IMHOST_VOICE_CORRUPT;
    }
    int samples = opus_decode(stream->decoder, packet, (opus_int32)count, pcm, MAX_FRAME, 0);
    if (samples < 0) {
        IMHOST_VOICE_SAY(verdict, "packet %u: libopus: %s", verdict->packets + 1, opus_strerror(samples));
        return IMHOST_VOICE_CORRUPT;
    }
    verdict->packets += 1;
    stream->decoded += (uint64_t)samples;
    if (stream->decoded > stream->max_samples + stream->pre_skip) {
        IMHOST_VOICE_SAY(verdict, "it goes on past %llu s", (unsigned long long)(stream->max_samples / 48000));
        return IMHOST_VOICE_TOO_LONG;
    }
    return IMHOST_VOICE_OK;
}

void imhost_opus_close(imhost_opus_stream *stream, imhost_voice_verdict *verdict) {
    verdict->samples = stream->decoded > stream->pre_skip ? stream->decoded - stream->pre_skip : 0;
    if (stream->decoder) opus_decoder_destroy(stream->decoder);
    stream->decoder = NULL;
}
