/* libmosquitto, Eclipse Mosquitto's own MQTT client library (Debian's libmosquitto-dev): the
   transport's connection to the broker. Imported as a system library; nothing is vendored. */
#include <mosquitto.h>
#include <mqtt_protocol.h>
