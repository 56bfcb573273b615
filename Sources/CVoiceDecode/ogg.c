/*
 * Ogg read with libogg for its one Opus stream (RFC 7845): the first packet is the OpusHead,
 * the second the OpusTags, every other one is decoded. libogg checks each page's CRC.
 */
#include "opus_stream.h"

#include <ogg/ogg.h>
#include <stdio.h>
#include <string.h>

imhost_voice_verdict imhost_voice_decode_ogg(const uint8_t *bytes, size_t count, uint64_t max_samples) {
    imhost_voice_verdict verdict;
    memset(&verdict, 0, sizeof verdict);
    imhost_opus_stream stream;
    memset(&stream, 0, sizeof stream);
    ogg_sync_state sync;
    ogg_stream_state logical;
    ogg_sync_init(&sync);
    int code = IMHOST_VOICE_OK, started = 0, ended = 0, open_packet = 0;
    long packets = 0;
    size_t consumed = 0;
    char *buffer = ogg_sync_buffer(&sync, (long)count);
    if (!buffer) {
        ogg_sync_clear(&sync);
        verdict.code = IMHOST_VOICE_CORRUPT;
        IMHOST_VOICE_SAY(&verdict, "libogg could not take %zu bytes", count);
        return verdict;
    }
    memcpy(buffer, bytes, count);
    ogg_sync_wrote(&sync, (long)count);
    ogg_page page;
    int got;
    while (code == IMHOST_VOICE_OK && (got = ogg_sync_pageout(&sync, &page)) != 0) {
        if (got < 0 && ended) {
            code = IMHOST_VOICE_TRAILING;
            verdict.trailing = count - consumed;
            IMHOST_VOICE_SAY(&verdict, "%zu bytes follow its last page", count - consumed);
            break;
        }
        if (got < 0) {
            code = IMHOST_VOICE_CORRUPT;
            IMHOST_VOICE_SAY(&verdict, "its pages are broken (a bad checksum, or bytes that are not a page)");
            break;
        }
        consumed += (size_t)page.header_len + (size_t)page.body_len;
        if (!started) {
            if (!ogg_page_bos(&page)) {
                code = IMHOST_VOICE_CORRUPT;
                IMHOST_VOICE_SAY(&verdict, "its first page does not begin a stream");
                break;
            }
            ogg_stream_init(&logical, ogg_page_serialno(&page));
            started = 1;
        } else if (ogg_page_serialno(&page) != logical.serialno || ended || ogg_page_bos(&page)) {
            code = IMHOST_VOICE_UNSUPPORTED;
            IMHOST_VOICE_SAY(&verdict, "it holds more than one stream");
            break;
        }
        /* A page says it continues a packet only when the one before left one open (its last
           lacing value 255): otherwise libogg would drop a packet without a word. */
        if (ogg_page_continued(&page) != open_packet) {
            code = IMHOST_VOICE_CORRUPT;
            IMHOST_VOICE_SAY(&verdict, "a page's continued flag does not match the page before it");
            break;
        }
        {
            int segments = page.header[26];
            open_packet = segments > 0 && page.header[27 + segments - 1] == 255;
        }
        if (ogg_stream_pagein(&logical, &page) != 0) {
            code = IMHOST_VOICE_CORRUPT;
            IMHOST_VOICE_SAY(&verdict, "a page is out of its stream's order");
            break;
        }
        if (ogg_page_eos(&page)) ended = 1;
        ogg_packet packet;
        int out;
        while (code == IMHOST_VOICE_OK && (out = ogg_stream_packetout(&logical, &packet)) != 0) {
            if (out < 0) {
                code = IMHOST_VOICE_CORRUPT;
                IMHOST_VOICE_SAY(&verdict, "a page is missing from its stream");
                break;
            }
            packets += 1;
            if (packets == 1) {
                code = imhost_opus_open(&stream, packet.packet, (size_t)packet.bytes, max_samples, &verdict);
            } else if (packets == 2) {
                if (packet.bytes < 8 || memcmp(packet.packet, "OpusTags", 8) != 0) {
                    code = IMHOST_VOICE_CORRUPT;
                    IMHOST_VOICE_SAY(&verdict, "its second packet is not OpusTags");
                }
            } else {
                code = imhost_opus_packet(&stream, packet.packet, (size_t)packet.bytes, &verdict);
            }
        }
    }
    if (code == IMHOST_VOICE_OK) {
        long left = sync.fill - sync.returned;
        if (left > 0) {
            const unsigned char *rest = sync.data + sync.returned;
            int page_start = memcmp(rest, "OggS", left < 4 ? (size_t)left : 4) == 0;
            code = page_start ? IMHOST_VOICE_TRUNCATED : IMHOST_VOICE_TRAILING;
            verdict.trailing = page_start ? 0 : (uint64_t)left;
            IMHOST_VOICE_SAY(&verdict, page_start ? "its last page is cut short" : "%ld bytes follow its last page", left);
        } else if (!started) {
            code = IMHOST_VOICE_TRUNCATED;
            IMHOST_VOICE_SAY(&verdict, "it holds no page");
        } else if (!ended) {
            code = IMHOST_VOICE_TRUNCATED;
            IMHOST_VOICE_SAY(&verdict, "its last page does not end its stream");
        } else if (packets < 3) {
            code = IMHOST_VOICE_CORRUPT;
            IMHOST_VOICE_SAY(&verdict, "it holds no sound");
        }
    }
    if (stream.decoder) imhost_opus_close(&stream, &verdict);
    if (started) ogg_stream_clear(&logical);
    ogg_sync_clear(&sync);
    verdict.code = code;
    return verdict;
}
