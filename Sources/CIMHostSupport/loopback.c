#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include "imhost_support.h"

/* One sock_diag request for exactly one socket, the one whose source is `client` and whose
   destination is 127.0.0.1:server_port (the connecting side's socket, which carries its
   owner's uid); the kernel answers with that socket alone or an error. */
static int by_netlink(const struct sockaddr_in *client, uint16_t server_port, uid_t *uid) {
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0) return -1;
    struct {
        struct nlmsghdr header;
        struct inet_diag_req_v2 request;
    } message;
    memset(&message, 0, sizeof message);
    message.header.nlmsg_len = sizeof message;
    message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    message.header.nlmsg_flags = NLM_F_REQUEST;
    message.request.sdiag_family = AF_INET;
    message.request.sdiag_protocol = IPPROTO_TCP;
    message.request.idiag_states = ~0U;
    message.request.id.idiag_sport = client->sin_port;
    message.request.id.idiag_dport = htons(server_port);
    message.request.id.idiag_src[0] = client->sin_addr.s_addr;
    message.request.id.idiag_dst[0] = htonl(INADDR_LOOPBACK);
    message.request.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
    message.request.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
    int found = -1;
    if (sendto(fd, &message, sizeof message, 0, (struct sockaddr *)&kernel, sizeof kernel) == (ssize_t)sizeof message) {
        /* A reply to a request without NLM_F_DUMP is one message: the socket, or an error. */
        long buffer[2048 / sizeof(long)];
        ssize_t length = recv(fd, buffer, sizeof buffer, 0);
        struct nlmsghdr *reply = (struct nlmsghdr *)buffer;
        if (length > 0 && NLMSG_OK(reply, (size_t)length) && reply->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
            reply->nlmsg_len >= NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
            struct inet_diag_msg *socket_info = NLMSG_DATA(reply);
            *uid = socket_info->idiag_uid;
            found = 0;
        }
    }
    close(fd);
    return found;
}

/* The same from /proc/net/tcp: the line whose local address is `client` and whose remote one
   is 127.0.0.1:server_port; its eighth field is the owner's uid. */
static int by_proc(const struct sockaddr_in *client, uint16_t server_port, uid_t *uid) {
    FILE *table = fopen("/proc/net/tcp", "re");
    if (!table) return -1;
    char line[512];
    int found = -1;
    unsigned int want_local = client->sin_addr.s_addr, want_local_port = ntohs(client->sin_port);
    unsigned int want_remote = htonl(INADDR_LOOPBACK);
    if (fgets(line, sizeof line, table)) {
        while (fgets(line, sizeof line, table)) {
            unsigned int local, local_port, remote, remote_port, state, owner;
            /* "  sl  local_address rem_address   st tx_queue:rx_queue tr:tm->when retrnsmt   uid" */
            if (sscanf(line, " %*d: %8X:%4X %8X:%4X %2X %*8X:%*8X %*2X:%*8X %*8X %u", &local, &local_port, &remote, &remote_port, &state,
                       &owner) != 6)
                continue;
            if (local == want_local && local_port == want_local_port && remote == want_remote && remote_port == server_port) {
                *uid = owner;
                found = 0;
                break;
            }
        }
    }
    fclose(table);
    return found;
}

int imhost_loopback_peer_uid(const void *client, unsigned int client_length, uint16_t server_port, uid_t *uid) {
    if (client_length < sizeof(struct sockaddr_in) || ((const struct sockaddr *)client)->sa_family != AF_INET) return -1;
    const struct sockaddr_in *address = client;
    if (by_netlink(address, server_port, uid) == 0) return 0;
    return by_proc(address, server_port, uid);
}

long imhost_raise_open_files(long wanted) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return -1;
    if (limit.rlim_cur != RLIM_INFINITY && (long)limit.rlim_cur < wanted) {
        rlim_t target = (rlim_t)wanted;
        if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < target) target = limit.rlim_max;
        limit.rlim_cur = target;
        setrlimit(RLIMIT_NOFILE, &limit);
        getrlimit(RLIMIT_NOFILE, &limit);
    }
    return limit.rlim_cur == RLIM_INFINITY ? wanted : (long)limit.rlim_cur;
}
