/* GNU libmicrohttpd (Debian's libmicrohttpd-dev): the HTTP server of `imhost web`. Imported as a
   system library; nothing is vendored. Its variadic functions cannot be called from Swift, so
   the few calls imhost makes of them are wrapped here. */
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdint.h>

/* A daemon on `address` (127.0.0.1 and a port, 0 for a free one), driven by the caller's own
   loop through epoll (no thread of its own), that may suspend and resume connections (a stream
   of events waits suspended until it has something to send). `accept` decides, from the
   client's address, whether a new connection is served at all; `notify` hears of every
   connection as it opens and closes; `completed` is called when a request ends, to free what it
   kept. At most `limit` connections at once (past it libmicrohttpd stops accepting: keep it
   above what the caller lets stay open); connections idle for `timeout` seconds are closed. */
static inline struct MHD_Daemon *imhost_mhd_start(const struct sockaddr_in *address, unsigned int limit, unsigned int timeout,
                                                  MHD_AcceptPolicyCallback accept, void *accept_cls,
                                                  MHD_AccessHandlerCallback handler, void *handler_cls,
                                                  MHD_NotifyConnectionCallback notify, void *notify_cls,
                                                  MHD_RequestCompletedCallback completed, void *completed_cls) {
    return MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME, 0, accept, accept_cls, handler, handler_cls,
                            MHD_OPTION_SOCK_ADDR, address,
                            MHD_OPTION_CONNECTION_LIMIT, limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, timeout,
                            MHD_OPTION_NOTIFY_CONNECTION, notify, notify_cls,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                            MHD_OPTION_END);
}

/* The socket of `connection`; -1 when libmicrohttpd does not say. */
static inline int imhost_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/* The daemon's epoll descriptor, to wait on in the caller's poll loop; -1 when there is none. */
static inline int imhost_mhd_epoll_fd(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_EPOLL_FD);
    return info == NULL ? -1 : info->epoll_fd;
}

/* The port the daemon listens on (the one the kernel chose, for port 0); 0 when unknown. */
static inline uint16_t imhost_mhd_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}
