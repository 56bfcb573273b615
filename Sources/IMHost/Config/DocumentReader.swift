/// Reads a parsed JSON document against a schema, turning every wrong key or type into a
/// ``ConfigError`` that names the file, line, column and path. Used for host.json and scenarios.
package struct DocumentReader {
    package let file: String

    package init(file: String) { self.file = file }

    package func fail(_ node: JSONNode, _ path: String, _ message: String) -> ConfigError {
        ConfigError(file: file, position: node.position, path: path, message: message)
    }

    /// The members of an object, refusing keys not in `allowed` with the closest allowed key.
    package func members(_ node: JSONNode, _ path: @autoclosure () -> String, allowed: [String]?) throws(ConfigError) -> [(key: String, keyPosition: SourcePosition, value: JSONNode)] {
        guard case .object(let members) = node.value else {
            throw fail(node, path(), "expected an object, found \(node.kindName)")
        }
        if let allowed {
            for member in members where !allowed.contains(member.key) {
                let hint = closestMatch(to: member.key, among: allowed).map { "; did you mean \"\($0)\"?" }
                    ?? "; allowed keys: " + allowed.joined(separator: ", ")
                throw ConfigError(file: file, position: member.keyPosition, path: join(path(), member.key),
                                  message: "unknown key \"\(member.key)\"\(hint)")
            }
        }
        return members
    }

    package func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : path + "." + key }

    package func string(_ node: JSONNode, _ path: String) throws(ConfigError) -> String {
        guard case .string(let value) = node.value else { throw fail(node, path, "expected a string, found \(node.kindName)") }
        return value
    }

    package func bool(_ node: JSONNode, _ path: String) throws(ConfigError) -> Bool {
        guard case .bool(let value) = node.value else { throw fail(node, path, "expected true or false, found \(node.kindName)") }
        return value
    }

    package func id(_ node: JSONNode, _ path: String) throws(ConfigError) -> Int {
        guard case .number(let value, let text) = node.value else {
            throw fail(node, path, "expected a whole number, found \(node.kindName)")
        }
        guard value == value.rounded(), value >= 0, value <= Double(Int32.max) else {
            throw fail(node, path, "expected a whole number from 0 to \(Int32.max), found \(text)")
        }
        return Int(value)
    }

    package func array(_ node: JSONNode, _ path: String) throws(ConfigError) -> [JSONNode] {
        guard case .array(let elements) = node.value else { throw fail(node, path, "expected an array, found \(node.kindName)") }
        return elements
    }
}
