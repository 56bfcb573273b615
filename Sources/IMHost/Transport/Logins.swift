/// The logins a broker knows hosts by, as imhost makes them (`imhost broker`, for mosquitto's
/// dynamic-security plugin and a NATS cluster alike): a user's first device logs in as the user,
/// another as `user~device`, with a session of its own and the user's topics. What the plugin is
/// told besides (its roles, its file, its control topic) is `IMHostBroker`'s.
public enum DynamicSecurity {
    /// Joins a user and a device in a device's login: `alice~phone`. User ids are letters,
    /// digits, `.`, `-` and `_` (``TransportID``), so no user id holds it, and no login of one
    /// user is another user's; unlike `+`, `#` and `/` it means nothing in an MQTT topic or
    /// filter, unlike `:` it is no separator of mosquitto_passwd's files, unlike `@` it needs no
    /// escaping in a URL (RFC 3986 leaves it unreserved), and in the middle of a word no shell
    /// expands it.
    public static let separator: Character = "~"

    /// The device login of `device` of `user`; a user's first device logs in as the user.
    public static func login(user: String, device: String) -> String { "\(user)\(separator)\(device)" }

    /// The user and device of a login: `alice~phone` → (alice, phone); `alice` → (alice, nil).
    /// `nil`: not a user's login (the admin's, or not made by imhost).
    public static func parse(login: String) -> (user: String, device: String?)? {
        let parts = login.split(separator: separator, maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard TransportID.problem(parts[0], allowingOperator: true) == nil else { return nil }
        if parts.count == 1 { return (parts[0], nil) }
        guard TransportID.problem(parts[1], allowingOperator: true) == nil else { return nil }
        return (parts[0], parts[1])
    }

    /// Why `device` cannot name a device, for a person; `nil` when it can.
    public static func deviceProblem(_ device: String) -> String? {
        guard TransportID.problem(device, allowingOperator: true) != nil else { return nil }
        return "cannot name a device: device names are 1 to 64 of A-Z a-z 0-9 . _ - (they become part of a login and a topic level)"
    }
}
