/* The Opus part both containers share: the OpusHead header, then every packet decoded. */
#ifndef IMHOST_OPUS_STREAM_H
#define IMHOST_OPUS_STREAM_H

#include "voice_decode.h"
#include <opus.h>

typedef struct {
    OpusDecoder *decoder;
    int channels;
    uint32_t pre_skip;
    uint64_t decoded;
    uint64_t max_samples;
} imhost_opus_stream;

/* Reads an OpusHead (RFC 7845, 5.1) and makes a decoder for it; 0, or a verdict code with
   `verdict->detail` said. */
int imhost_opus_open(imhost_opus_stream *stream, const uint8_t *head, size_t count, uint64_t max_samples,
                     imhost_voice_verdict *verdict);
/* Decodes one packet; 0, or a verdict code with `verdict->detail` said. */
int imhost_opus_packet(imhost_opus_stream *stream, const uint8_t *packet, size_t count, imhost_voice_verdict *verdict);
/* The samples decoded less the pre-skip, into the verdict; frees the decoder. */
void imhost_opus_close(imhost_opus_stream *stream, imhost_voice_verdict *verdict);

#define IMHOST_VOICE_SAY(verdict, ...) snprintf((verdict)->detail, sizeof((verdict)->detail), __VA_ARGS__)

#endif
