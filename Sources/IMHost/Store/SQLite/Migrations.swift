/// The store's schema, one migration a version, as GRDB's `DatabaseMigrator` keeps them: in
/// order, each in its own transaction, the version recorded in `PRAGMA user_version` in the same
/// transaction. A database newer than this code is refused rather than guessed at.
enum Migrations {
    /// Each migration's SQL; migration N (from 1) takes the database from version N-1 to N.
    static let all: [String] = [
        // 1: conversations, messages with their global ids and state, the outbox as a table,
        // blocked peers, the full-text index, and what the store knows of itself.
        """
        CREATE TABLE conversations (
            id INTEGER PRIMARY KEY,
            peer TEXT NOT NULL UNIQUE,
            -- The page the conversation opens on: the last jump's rootCateID, cateID and infoID.
            root_cate_id INTEGER,
            cate_id INTEGER,
            info_id TEXT,
            -- How many messages it holds: the next message's position.
            message_count INTEGER NOT NULL DEFAULT 0,
            -- The seq the user's next message to this peer gets.
            next_seq INTEGER NOT NULL DEFAULT 1,
            unread INTEGER NOT NULL DEFAULT 0,
            last_message INTEGER,
            updated_at INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX conversations_by_time ON conversations (updated_at DESC, id DESC);

        CREATE TABLE messages (
            id INTEGER PRIMARY KEY,
            conversation INTEGER NOT NULL REFERENCES conversations (id),
            -- Its place in the conversation, from 0: what /tap N and /why N number from 1.
            position INTEGER NOT NULL,
            sender TEXT NOT NULL,
            recipient TEXT NOT NULL,
            -- The id its sender gave it: unique among that sender's messages.
            global_id TEXT NOT NULL,
            -- The sender's count of its messages to this peer, from 1.
            seq INTEGER,
            key TEXT NOT NULL,
            payload TEXT NOT NULL,
            sent_at INTEGER NOT NULL,
            stored_at INTEGER NOT NULL,
            outgoing INTEGER NOT NULL,
            -- queued, sent, delivered, read or failed (outgoing); received or read (incoming).
            state TEXT NOT NULL,
            reason TEXT,
            -- The page the sender was on, as JSON, when it says.
            jump TEXT,
            -- What search and the list of conversations show of it.
            summary TEXT NOT NULL DEFAULT '',
            -- 1 when it came over the transport from another host (not /recv): a line crash
            -- drawing it costs only this message, unless two senders' messages crash the line.
            arrived INTEGER NOT NULL DEFAULT 0,
            UNIQUE (sender, global_id),
            UNIQUE (conversation, position)
        );
        -- A peer's messages in a conversation by seq: where a late one goes, found at once. (Only
        -- incoming ones: a send writes one index fewer.)
        CREATE INDEX messages_by_seq ON messages (conversation, sender, seq) WHERE outgoing = 0;

        -- Only what waits for delivery: small, and read whole, so it has no index to keep up.
        CREATE TABLE outbox (
            message INTEGER PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
            peer TEXT NOT NULL,
            -- Who is handing it over now, and until when: a process that dies leaves a lease
            -- that expires.
            lease_pid INTEGER,
            lease_until INTEGER,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_at INTEGER NOT NULL DEFAULT 0,
            queued_at INTEGER NOT NULL
        );

        -- Receipts to send: read receipts the chats queue as they show messages (whichever
        -- process showed them), sent by the process holding the connection.
        CREATE TABLE receipts_out (
            id INTEGER PRIMARY KEY,
            peer TEXT NOT NULL,
            global_id TEXT NOT NULL,
            state TEXT NOT NULL
        );

        CREATE TABLE blocked (
            peer TEXT PRIMARY KEY,
            since INTEGER NOT NULL
        );

        CREATE TABLE store_facts (
            name TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );

        -- Words of text messages and cards' string values, indexed by trigrams so Chinese words
        -- are found; its rows are the messages' ids. It holds no text of its own.
        CREATE VIRTUAL TABLE message_text USING fts5 (text, content = '', tokenize = 'trigram');
        -- How far message_text has caught up: messages with a larger id are not in it yet. (A
        -- send or an arrival leaves its words to a later commit, so its own stays small.)
        CREATE TABLE search_progress (indexed_through INTEGER NOT NULL);
        INSERT INTO search_progress VALUES (0);
        """,
        // 2: a late message shows where it arrived, and says which shown message it was sent
        // before: stored messages never move.
        """
        -- For a message that arrived after one its sender sent later (a lower seq than one of
        -- that sender's stored messages): the position of that sender's stored message with the
        -- smallest seq above its own. NULL for every other message.
        ALTER TABLE messages ADD COLUMN sent_before INTEGER;
        """,
        // 3: read receipts are kept until their peer confirms them (sent again on a backoff,
        // and after every reconnect); what the user typed is kept as a draft until a line has
        // drawn it; what each peer's messages cost this day.
        """
        ALTER TABLE receipts_out ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE receipts_out ADD COLUMN next_at INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE receipts_out ADD COLUMN queued_at INTEGER NOT NULL DEFAULT 0;
        UPDATE receipts_out SET queued_at = CAST(strftime('%s', 'now') AS INTEGER) * 1000;

        -- A line typed into a chat (text, or /send), stored before any line code runs and gone
        -- once it is queued or refused: a worker that crashes between leaves it to the next.
        CREATE TABLE drafts (
            id INTEGER PRIMARY KEY,
            peer TEXT NOT NULL,
            typed TEXT NOT NULL,
            typed_at INTEGER NOT NULL
        );

        -- Messages and payload bytes stored from each peer, by UTC day (milliseconds / 86400000).
        CREATE TABLE peer_budget (
            peer TEXT NOT NULL,
            day INTEGER NOT NULL,
            messages INTEGER NOT NULL,
            bytes INTEGER NOT NULL,
            PRIMARY KEY (peer, day)
        ) WITHOUT ROWID;
        """,
        // 4: the database refuses a message state the code does not know (MessageLife's
        // states, listed here as they are there: a test holds the two together). Triggers, so a
        // table of a million rows is not rebuilt for a CHECK.
        """
        CREATE TRIGGER messages_known_state_insert BEFORE INSERT ON messages
        WHEN (NEW.outgoing = 1 AND NEW.state NOT IN ('queued', 'sent', 'delivered', 'read', 'failed', 'given-up'))
          OR (NEW.outgoing = 0 AND NEW.state NOT IN ('received', 'read'))
        BEGIN SELECT RAISE(ABORT, 'a message state imhost does not know'); END;
        CREATE TRIGGER messages_known_state_update BEFORE UPDATE OF state, outgoing ON messages
        WHEN (NEW.outgoing = 1 AND NEW.state NOT IN ('queued', 'sent', 'delivered', 'read', 'failed', 'given-up'))
          OR (NEW.outgoing = 0 AND NEW.state NOT IN ('received', 'read'))
        BEGIN SELECT RAISE(ABORT, 'a message state imhost does not know'); END;
        """,
        // 5: photos a message carries, apart from its payload and the search index (a page
        // reads what they are without their bytes; the browser fetches the bytes one by one).
        """
        CREATE TABLE photos (
            id INTEGER PRIMARY KEY,
            message INTEGER NOT NULL REFERENCES messages (id),
            -- Its place among the message's photos, from 0: what a card's image names.
            position INTEGER NOT NULL,
            -- png, jpeg or webp, and its size in pixels, as its bytes say; NULL with a problem.
            kind TEXT,
            width INTEGER,
            height INTEGER,
            bytes BLOB,
            -- Why a photo a peer sent is not shown (not a picture, or not what it said it was).
            problem TEXT,
            UNIQUE (message, position)
        );
        """,
        // 6: read receipts say how the receiver drew a line's message; the sender keeps what
        // its peer said; and each host counts how it drew each line's messages, for its fleet
        // status.
        """
        -- For a read receipt of a line's message: how this host drew it, as the receipt's drawn
        -- entry says it (JSON). NULL for the rest.
        ALTER TABLE receipts_out ADD COLUMN drawn TEXT;
        -- For the user's own message of a line's key: how the peer drew it, as its read receipt
        -- said (JSON). NULL until one says.
        ALTER TABLE messages ADD COLUMN drawn TEXT;
        -- How this host drew the line messages from other hosts that its chats showed: by line,
        -- `version` (name: the line's version, '' unknown) or `placeholder` (name: why, a word).
        CREATE TABLE drawn_counts (
            line TEXT NOT NULL,
            kind TEXT NOT NULL,
            name TEXT NOT NULL,
            count INTEGER NOT NULL,
            PRIMARY KEY (line, kind, name)
        ) WITHOUT ROWID;
        """,
        // 7: a draft names the process that kept it (the chat's supervisor): a chat that starts
        // takes up only drafts whose chat is gone, never those another chat of the user is
        // about to send (which it then sent twice).
        """
        ALTER TABLE drafts ADD COLUMN owner INTEGER;
        """,
        // 8: one person, several devices. A message names the device that wrote it (its
        // sender's; NULL: the sender's first device, or for the user's own messages this
        // device, whose first device is then '~'), and a sender's messages are in order by (device, seq). The user's other
        // devices this one knows, with how far it has what each has (their messages table's
        // ids); what it says to them (a conversation read, a peer blocked) until it is said.
        """
        ALTER TABLE messages ADD COLUMN device TEXT;
        DROP INDEX messages_by_seq;
        CREATE INDEX messages_by_seq ON messages (conversation, sender, device, seq) WHERE outgoing = 0;
        CREATE INDEX own_messages_by_seq ON messages (conversation, device, seq) WHERE outgoing = 1 AND device IS NOT NULL;
        CREATE TABLE siblings (
            login TEXT PRIMARY KEY,
            through INTEGER,
            seen_at INTEGER NOT NULL,
            -- The point of a chunk a catch-up from it stalled on once: a second stall there
            -- moves past it, so one message it cannot give never stops the catch-up for good.
            stalled INTEGER
        ) WITHOUT ROWID;
        CREATE TABLE sibling_notes (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,
            peer TEXT NOT NULL,
            global_id TEXT,
            blocked INTEGER,
            queued_at INTEGER NOT NULL
        );
        """,
        // 9: another device read a conversation up to a message this one does not have yet (it
        // came before the message, or the message comes later from the broker, a resend or a
        // catch-up): kept until that message is stored here, then read up to it and dropped.
        """
        -- The newest such a peer: at most one row a conversation.
        CREATE TABLE sibling_seen (
            peer TEXT PRIMARY KEY,
            -- The peer's id of the message read up to.
            global_id TEXT NOT NULL,
            kept_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        """,
        // 10: a failed message's reason is a code and its data (MessageFailure, as JSON:
        // {"code":"refused-by-peer","peer":"bob","refusal":"budget"}), worded by each front end
        // where it draws it, with what sends it again there (the terminal's /retry 4, the page's
        // button). The sentences earlier imhosts kept stay readable as the code "other"; the
        // terminal's "/retry N" in them becomes "retry" ("...: retry once bob has updated"),
        // which reads right on either. Only failed rows change: the table is not rebuilt.
        """
        UPDATE messages SET reason = json_object('code', 'other', 'text', replace(reason, '/retry N', 'retry')) WHERE reason IS NOT NULL;
        """,
        // 11: a chat cleared on this device keeps the ids of what it held (nothing else of them):
        // the same message coming again (its sender's resend, another device's catch-up) is
        // known, answered as one stored, and not stored again.
        """
        CREATE TABLE cleared (
            sender TEXT NOT NULL,
            global_id TEXT NOT NULL,
            PRIMARY KEY (sender, global_id)
        ) WITHOUT ROWID;
        """,
        // 12: the user's reports of people (the menu's Report), kept until the broker takes
        // them: `body` is the document as it is published (UserReport), `slot` the one of the
        // user's report topics it goes to (in turn), `taken_at` when the broker answered it
        // (NULL: not yet).
        """
        CREATE TABLE reports (
            id TEXT PRIMARY KEY,
            peer TEXT NOT NULL,
            made_at INTEGER NOT NULL,
            body TEXT NOT NULL,
            slot INTEGER NOT NULL,
            taken_at INTEGER
        ) WITHOUT ROWID;
        """,
        // 13: a reply names the message it quotes (its sender and id); a recalled message keeps
        // its place and when it was recalled, and nothing of what it said (payload '{}',
        // summary '', no photos); reactions, one a person a message; what the user tells a
        // peer's host of its messages (a recall, a reaction) waits in peer_notes_out until that
        // host answers; what each peer's host announced it takes (its receipts' features).
        """
        ALTER TABLE messages ADD COLUMN reply_sender TEXT;
        ALTER TABLE messages ADD COLUMN reply_id TEXT;
        ALTER TABLE messages ADD COLUMN recalled_at INTEGER;
        -- The message by its sender and id (it may come after its reaction), who reacted, how.
        CREATE TABLE reactions (
            sender TEXT NOT NULL,
            global_id TEXT NOT NULL,
            person TEXT NOT NULL,
            emoji TEXT NOT NULL,
            at INTEGER NOT NULL,
            PRIMARY KEY (sender, global_id, person)
        ) WITHOUT ROWID;
        -- kind: 'recall' or 'react' (the feature the peer's host must announce); the message by
        -- its sender and id; value: a reaction's emoji ('' takes it back).
        CREATE TABLE peer_notes_out (
            peer TEXT NOT NULL,
            kind TEXT NOT NULL,
            global_id TEXT NOT NULL,
            sender TEXT NOT NULL,
            value TEXT NOT NULL DEFAULT '',
            at INTEGER NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_at INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (peer, kind, global_id)
        ) WITHOUT ROWID;
        -- A note for the user's other devices may carry a value and the message's sender.
        ALTER TABLE sibling_notes ADD COLUMN value TEXT;
        ALTER TABLE sibling_notes ADD COLUMN sender TEXT;
        CREATE TABLE peer_features (
            peer TEXT PRIMARY KEY,
            -- The names, space-separated, as its last receipt said them ('' for none).
            features TEXT NOT NULL,
            said_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        """,
        // 14: a voice message's recording, apart from its payload as photos are: its container,
        // its length as decoded (never the sender's word), its bytes; or why it is not played.
        // A file message's file, likewise. And the recalls a catch-up answer names, by an index of
        // their own.
        """
        CREATE TABLE voices (
            message INTEGER PRIMARY KEY REFERENCES messages (id),
            -- webm or ogg; NULL with a problem.
            kind TEXT,
            milliseconds INTEGER,
            bytes BLOB,
            problem TEXT
        );
        -- A file message's file: its safe name, its type as its bytes say, its bytes; or why not.
        CREATE TABLE files (
            message INTEGER PRIMARY KEY REFERENCES messages (id),
            name TEXT,
            type TEXT,
            bytes BLOB,
            problem TEXT
        );
        -- The latest recalls, which every catch-up answer names: found without a scan.
        CREATE INDEX messages_recalled ON messages (recalled_at) WHERE recalled_at IS NOT NULL;
        """,
        // 15: the lines each peer's host draws, as its newest receipt said them (the sender's
        // page says before a card goes when the peer will see a placeholder).
        """
        CREATE TABLE peer_lines (
            peer TEXT PRIMARY KEY,
            -- Each line its host draws and that line's version ('' when not known), as a JSON
            -- object by line id: {"house":"1.3.0"}; '{}' for none.
            lines TEXT NOT NULL,
            -- When its host said it, by the host's clock (never later than it came here): a
            -- receipt said earlier changes nothing.
            said_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        """,
        // 16: a card changed in place (IMKit 1.4's revisions): the newest revision of a message
        // beside its first payload, who made it and when. A revision's number only grows; of two
        // with one number, the larger author's id wins (both hosts choose the same).
        """
        ALTER TABLE messages ADD COLUMN revision INTEGER;
        ALTER TABLE messages ADD COLUMN revised_by TEXT;
        ALTER TABLE messages ADD COLUMN revised_at INTEGER;
        ALTER TABLE messages ADD COLUMN revised_payload TEXT;
        """,
    ]

    /// The version this code writes.
    static var latest: Int { all.count }

    /// Brings `database` to ``latest``, one migration a transaction. The version is read inside
    /// each transaction, under the write lock: two processes opening a new database at once
    /// never both run one migration. A database newer than this code is refused in one line.
    static func apply(to database: Database) throws {
        if try database.userVersion == latest { return }
        while try database.transaction({ () throws -> Bool in
            let current = try database.userVersion
            guard current <= latest else {
                throw Database.Failure(code: 0, message: "it was written by a newer imhost (schema \(current); this one knows up to \(latest)); run that imhost, or move the file aside",
                                       path: database.path)
            }
            guard current < latest else { return false }
            try database.execute(all[current])
            try database.execute("PRAGMA user_version = \(current + 1)")
            return true
        }) {}
    }
}
