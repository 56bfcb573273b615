import Foundation
import Testing

/// axe-core (4.12.1, taken out of a PyPI wheel by `make axe`, see `.ci/axe`) run in the page the
/// browser shows, as Element Web runs it in its end-to-end tests.
enum Axe {
    /// Where `make axe` puts axe-core.
    static let path = BuildProducts.repository + "/.build/axe-core/axe.min.js"

    /// axe-core's source, or a failure that says how to get it.
    static func source() throws -> String {
        guard let source = try? String(contentsOfFile: path, encoding: .utf8), source.contains("axe v4.12.1") else {
            throw ChromeDriver.Failure(description: "axe-core is not at \(path): run make axe (make test does), then run the tests again")
        }
        return source
    }

    /// One rule the page breaks, and where.
    struct Violation: CustomStringConvertible {
        /// axe's rule, e.g. `color-contrast`.
        var rule: String
        /// `minor`, `moderate`, `serious` or `critical`.
        var impact: String
        var help: String
        /// Each element that breaks it, as a CSS selector, with axe's summary of why.
        var nodes: [String]

        /// What a person cannot do past: serious or critical.
        var blocks: Bool { impact == "serious" || impact == "critical" }

        var description: String {
            "\(impact) \(rule): \(help)\n" + nodes.prefix(6).map { "    " + $0 }.joined(separator: "\n")
                + (nodes.count > 6 ? "\n    … and \(nodes.count - 6) more" : "")
        }
    }
}

extension Browser {
    /// What axe-core finds on the page now: every rule it runs (WCAG 2.0–2.2 A and AA, and its
    /// best practices), the page as it is drawn (its colour scheme, width, what is open).
    func axe() throws -> [Axe.Violation] {
        if try execute("return typeof window.axe === 'object'") as? Bool != true {
            // Scripts run through WebDriver are not held to the page's Content-Security-Policy:
            // the page itself never loads it.
            try execute(try Axe.source() + "\n;return true;")
        }
        let script = """
            const done = arguments[arguments.length - 1];
            window.axe.run(document, { resultTypes: ['violations'] })
              .then(results => done(results.violations.map(v => ({ rule: v.id, impact: v.impact || 'minor', help: v.help,
                nodes: v.nodes.map(n => n.target.join(' ') + ': ' + (n.failureSummary || '').replace(/\\s+/g, ' ')) }))))
              .catch(error => done({ error: String(error) }));
            """
        let answer = try command("POST", "/execute/async", ["script": script, "args": []])
        if let failed = (answer as? [String: Any])?["error"] as? String { throw ChromeDriver.Failure(description: "axe did not run: \(failed)") }
        return (answer as? [[String: Any]] ?? []).map {
            Axe.Violation(rule: $0["rule"] as? String ?? "", impact: $0["impact"] as? String ?? "",
                          help: $0["help"] as? String ?? "", nodes: $0["nodes"] as? [String] ?? [])
        }
    }

    /// Runs axe over the page as it is now, named `state` in what the test says: fails the test
    /// on a serious or critical violation, lists every other one in the test's output.
    func checkAccessibility(_ state: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let found = try axe()
        let blocking = found.filter(\.blocks)
        #expect(blocking.isEmpty, "axe-core finds, on \(state):\n\(blocking.map(\.description).joined(separator: "\n"))", sourceLocation: sourceLocation)
        for other in found where !other.blocks { print("axe-core, \(state): \(other)") }
    }

    /// Draws the page as a browser set to `scheme` (`light`, `dark`) and, if `reducedMotion`,
    /// asking for less motion: what `prefers-color-scheme` and `prefers-reduced-motion` answer.
    func emulate(scheme: String, reducedMotion: Bool = false) throws {
        try command("POST", "/goog/cdp/execute", ["cmd": "Emulation.setEmulatedMedia", "params": ["features": [
            ["name": "prefers-color-scheme", "value": scheme],
            ["name": "prefers-reduced-motion", "value": reducedMotion ? "reduce" : "no-preference"],
        ]]])
    }

    /// Makes the page's view `width` CSS pixels wide (and `height` high), as a phone's is:
    /// the window's size, not a zoom.
    func view(width: Int, height: Int) throws {
        try command("POST", "/goog/cdp/execute", ["cmd": "Emulation.setDeviceMetricsOverride", "params": [
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600,
        ]])
    }
}

/// The keys a test presses, as WebDriver names them.
enum Key: String {
    case tab = "\u{E004}", enter = "\u{E007}", escape = "\u{E00C}", space = " ", shift = "\u{E008}"
    case arrowUp = "\u{E013}", arrowDown = "\u{E015}", home = "\u{E011}", end = "\u{E010}"
}

extension Browser {
    /// Presses `keys` one after the other on whatever has the focus, as a keyboard does (no
    /// element is named: what the focus is on gets them).
    func press(_ keys: Key...) throws {
        try strokes(keys.flatMap { [("keyDown", $0.rawValue), ("keyUp", $0.rawValue)] })
    }

    /// Types `text` on whatever has the focus, key by key.
    func typeKeys(_ text: String) throws {
        try strokes(text.flatMap { [("keyDown", String($0)), ("keyUp", String($0))] })
    }

    /// Keys going down and up, in order, as WebDriver's key actions.
    private func strokes(_ strokes: [(String, String)]) throws {
        try command("POST", "/actions", ["actions": [["type": "key", "id": "keyboard", "actions": strokes.map { ["type": $0.0, "value": $0.1] }]]])
    }

    /// Presses Tab (Shift-Tab with `backwards`) until the focus is on what `selector` matches,
    /// at most `limit` times; returns whether it got there, the focus shown where it is.
    func tab(to selector: String, backwards: Bool = false, limit: Int = 80) throws -> Bool {
        for _ in 0..<limit {
            if try execute("return document.activeElement !== null && document.activeElement.matches(arguments[0])", [selector]) as? Bool == true {
                return true
            }
            if backwards {
                try strokes([("keyDown", Key.shift.rawValue), ("keyDown", Key.tab.rawValue), ("keyUp", Key.tab.rawValue), ("keyUp", Key.shift.rawValue)])
            } else {
                try press(.tab)
            }
        }
        return false
    }

    /// Whether what has the focus shows it: an outline of its own, drawn (`:focus-visible`).
    func focusIsVisible() throws -> Bool {
        try execute("""
            const element = document.activeElement;
            if (!element || element === document.body) return false;
            const style = getComputedStyle(element);
            return element.matches(':focus-visible') && style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2;
            """) as? Bool == true
    }

    /// What has the focus, described for a test's message.
    func focused() -> String {
        (try? execute("const e = document.activeElement; return e ? e.outerHTML.slice(0, 160) : 'nothing'")) as? String ?? "nothing"
    }
}

extension Browser {
    /// Makes the browser ask for pages in `languages` (its `Accept-Language`, e.g.
    /// `zh-CN,zh;q=0.9`), as a browser set to those languages does, from the next request on.
    func prefer(languages: String) throws {
        let agent = try execute("return navigator.userAgent") as? String ?? ""
        try command("POST", "/goog/cdp/execute", ["cmd": "Emulation.setUserAgentOverride", "params": [
            "userAgent": agent, "acceptLanguage": languages,
        ]])
    }
}
