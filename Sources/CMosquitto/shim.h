/* libmosquitto, Eclipse Mosquitto's own MQTT client library (Debian's libmosquitto-dev): the
   transport's connection to the broker. Imported as a system library; nothing is vendored. */
#include <mosquitto.h>
#include <mqtt_protocol.h>

#include <dlfcn.h>

/* Why the broker's certificate was not trusted, after a TLS connection failed: OpenSSL's verify
   result for the connection's SSL object, and its text ("certificate has expired", "hostname
   mismatch", "unable to get local issuer certificate"). libmosquitto links OpenSSL itself, so
   its functions are found in the process without linking them here (no OpenSSL headers
   needed). Returns -1 when there is no SSL object or OpenSSL is not loaded. */
static inline long imhost_tls_verify_result(struct mosquitto *mosq, const char **text) {
    void *ssl = mosquitto_ssl_get(mosq);
    if (ssl == 0) return -1;
    long (*get_result)(const void *) = (long (*)(const void *))dlsym(RTLD_DEFAULT, "SSL_get_verify_result");
    const char *(*describe)(long) = (const char *(*)(long))dlsym(RTLD_DEFAULT, "X509_verify_cert_error_string");
    if (get_result == 0 || describe == 0) return -1;
    long result = get_result(ssl);
    *text = describe(result);
    return result;
}
