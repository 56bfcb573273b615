/* imhost's retain rule: a mosquitto plugin (plugin API 5) that keeps the broker from holding
   retained messages nobody needs. The dynamic-security plugin grants or refuses a topic, never
   retain on it, so a user could leave a retained message on every topic it may write
   (imhost/u/+/from/<self>: any name in the +) and fill the broker's memory and persistence.

   A retained publish is refused (MOSQ_ERR_ACL_DENIED: PUBACK 0x87 under MQTT 5; under 3.1.1 an
   ordinary PUBACK and nothing kept, which the broker's log says) unless it is
     - empty: it clears a retained message, and keeps nothing;
     - or on a topic imhost retains by design, at most max_retained_bytes long (plugin option):
         imhost/fleet/config               the operator's fleet configuration
         imhost/fleet/status/<user>        a host's report (and its will)
         imhost/fleet/report/<user>/<slot> a person's report of someone, <slot> 0 to 31 (so a
                                           user holds at most 32; the operator reads and clears
                                           them; the ACL says who writes which)
         imhost/u/<user>/from/<user>       the session record of <user>'s first device
         imhost/u/<user>/from/<user>/<dev> the session record of device <dev> (login <user>~<dev>)
       where a login of <user> may retain only its own session record (so each login holds at
       most one, whatever device names it makes up). Another login gets through here only to be
       judged by dynamic security, which lets nobody but <user>'s devices and a bridge write there.
   Everything else is MOSQ_ERR_PLUGIN_DEFER, never MOSQ_ERR_SUCCESS: mosquitto takes the first
   plugin's answer that is not DEFER, so SUCCESS here would let a publish past dynamic security,
   whose plugin line comes after this one's.

   The broker runs plugins on its one thread, so the statics below need no lock. The mosquitto_*
   functions are the broker's own, found in its executable when it loads this library. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <mosquitto.h>
#include <mosquitto_broker.h>
#include <mosquitto_plugin.h>

static mosquitto_plugin_id_t *plugin_id;
/* The longest retained message kept (plugin_opt_max_retained_bytes; 0: no bound but the
   broker's max_packet_size). */
static unsigned long max_retained_bytes;
/* A refusal is said at most once every few seconds, so a flood of them cannot fill the log. */
enum { SAY_EVERY_SECONDS = 10, LEVELS = 6 };
static time_t said_at;
static unsigned long unsaid;

/* A topic's levels, at most LEVELS of them: the start and length of each. */
struct levels {
    const char *start[LEVELS];
    size_t length[LEVELS];
    int count;
};

/* Splits `topic` at '/'; 0 when it has more than LEVELS levels (no topic retained by design has). */
static int split(const char *topic, struct levels *out) {
    out->count = 0;
    for (const char *level = topic;; ) {
        if (out->count == LEVELS) return 0;
        const char *slash = strchr(level, '/');
        size_t length = slash ? (size_t)(slash - level) : strlen(level);
        out->start[out->count] = level;
        out->length[out->count] = length;
        out->count++;
        if (!slash) return 1;
        level = slash + 1;
    }
}

static int level_is(const struct levels *levels, int index, const char *word) {
    return levels->length[index] == strlen(word) && memcmp(levels->start[index], word, levels->length[index]) == 0;
}

static int same_level(const struct levels *levels, int a, int b) {
    return levels->length[a] == levels->length[b] && memcmp(levels->start[a], levels->start[b], levels->length[a]) == 0;
}

/* Why a retained publish of `length` bytes on `topic` by `login` is refused; NULL: it is not
   (dynamic security judges it). */
/* Whether level `index` is a report's slot as imhost writes it: 0 to 31, no leading zero. */
static int report_slot(const struct levels *levels, int index) {
    const char *level = levels->start[index];
    size_t length = levels->length[index];
    if (length == 1) return level[0] >= '0' && level[0] <= '9';
    if (length != 2 || level[0] < '1' || level[0] > '3' || level[1] < '0' || level[1] > '9') return 0;
    return (level[0] - '0') * 10 + (level[1] - '0') < 32;
}

static const char *refusal(const char *topic, const char *login, unsigned long length) {
    static const char *elsewhere = "imhost retains only imhost/fleet/config, imhost/fleet/status/<user>, imhost/fleet/report/<user>/<0-31> and each login's own session record";
    struct levels levels;
    if (!split(topic, &levels) || levels.count < 3 || !level_is(&levels, 0, "imhost")) return elsewhere;
    int fleet = level_is(&levels, 1, "fleet")
        && ((levels.count == 3 && level_is(&levels, 2, "config"))
            || (levels.count == 4 && level_is(&levels, 2, "status") && levels.length[3] > 0)
            || (levels.count == 5 && level_is(&levels, 2, "report") && levels.length[3] > 0 && report_slot(&levels, 4)));
    /* imhost/u/<user>/from/<user>[/<device>]: addressed to its own writer, no level empty. */
    int record = (levels.count == 5 || levels.count == 6) && level_is(&levels, 1, "u") && level_is(&levels, 3, "from")
        && levels.length[2] > 0 && same_level(&levels, 2, 4) && levels.length[levels.count - 1] > 0;
    if (!fleet && !record) return elsewhere;
    if (max_retained_bytes > 0 && length > max_retained_bytes) return "longer than any message imhost retains";
    if (record && login) {
        /* A login is <user> (a first device) or <user>~<device>. */
        const char *tilde = strchr(login, '~');
        size_t user_length = tilde ? (size_t)(tilde - login) : strlen(login);
        int own_user = user_length == levels.length[2] && memcmp(login, levels.start[2], user_length) == 0;
        const char *device = tilde ? tilde + 1 : NULL;
        int own_record = levels.count == 5 ? device == NULL
            : device != NULL && strlen(device) == levels.length[5] && memcmp(device, levels.start[5], levels.length[5]) == 0;
        if (own_user && !own_record) return "a device retains only its own session record";
    }
    return NULL;
}

/* `text` for the log: at most `size` - 1 bytes, each outside printable ASCII as '?' (a login and
   a topic come from clients, and a log is read on terminals). */
static void printable(const char *text, char *out, size_t size) {
    size_t used = 0;
    for (; text && *text && used + 1 < size; text++) {
        unsigned char byte = (unsigned char)*text;
        out[used++] = byte >= 0x20 && byte < 0x7F ? (char)byte : '?';
    }
    out[used] = '\0';
}

static void say(const char *login, const char *topic, unsigned long length, const char *why) {
    time_t now = time(NULL);
    if (said_at != 0 && now - said_at < SAY_EVERY_SECONDS) {
        unsaid++;
        return;
    }
    char who[80], where[200];
    printable(login ? login : "(no login)", who, sizeof who);
    printable(topic, where, sizeof where);
    if (unsaid == 0) {
        mosquitto_log_printf(MOSQ_LOG_NOTICE, "imhost retain rule: refused a retained message of %lu bytes from %s on %s: %s",
            length, who, where, why);
    } else {
        mosquitto_log_printf(MOSQ_LOG_NOTICE, "imhost retain rule: refused a retained message of %lu bytes from %s on %s: %s (and %lu more, unsaid, since the last such line)",
            length, who, where, why, unsaid);
    }
    said_at = now;
    unsaid = 0;
}

static int on_acl_check(int event, void *event_data, void *userdata) {
    (void)event;
    (void)userdata;
    struct mosquitto_evt_acl_check *check = event_data;
    if (check->access != MOSQ_ACL_WRITE || !check->retain || check->payloadlen == 0) return MOSQ_ERR_PLUGIN_DEFER;
    const char *login = mosquitto_client_username(check->client);
    const char *why = refusal(check->topic, login, check->payloadlen);
    if (!why) return MOSQ_ERR_PLUGIN_DEFER;
    say(login, check->topic, check->payloadlen, why);
    return MOSQ_ERR_ACL_DENIED;
}

int mosquitto_plugin_version(int supported_version_count, const int *supported_versions) {
    for (int i = 0; i < supported_version_count; i++) {
        if (supported_versions[i] == 5) return 5;
    }
    return -1;
}

int mosquitto_plugin_init(mosquitto_plugin_id_t *identifier, void **userdata, struct mosquitto_opt *options, int option_count) {
    (void)userdata;
    for (int i = 0; i < option_count; i++) {
        if (strcmp(options[i].key, "max_retained_bytes") != 0) continue;
        char *end = NULL;
        max_retained_bytes = strtoul(options[i].value, &end, 10);
        if (end == options[i].value || *end != '\0') {
            mosquitto_log_printf(MOSQ_LOG_ERR, "imhost retain rule: plugin_opt_max_retained_bytes is not a number of bytes; write the broker folder again with imhost broker upgrade");
            return 1;
        }
    }
    plugin_id = identifier;
    return mosquitto_callback_register(plugin_id, MOSQ_EVT_ACL_CHECK, on_acl_check, NULL, NULL);
}

int mosquitto_plugin_cleanup(void *userdata, struct mosquitto_opt *options, int option_count) {
    (void)userdata;
    (void)options;
    (void)option_count;
    return mosquitto_callback_unregister(plugin_id, MOSQ_EVT_ACL_CHECK, on_acl_check, NULL);
}
