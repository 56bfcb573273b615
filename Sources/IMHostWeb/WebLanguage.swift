import IMHostRuntime

/// The language the page speaks to the person in: the platform's own words (states,
/// placeholders, menus, notices, errors) in English or Chinese. A line's words (its titles,
/// cards, items, quick replies) are the line's, and never translated.
///
/// The page's language is the first of those the browser's `Accept-Language` prefers that the
/// page speaks (`imhost web --lang` fixes it instead); a chat page keeps the language of the
/// request that opened it. Every English sentence the page says is a key of ``chineseWords``: `{0}`,
/// `{1}` in it stand for what is put in (a name, a number), in the order given.
public enum WebLanguage: String, Sendable, CaseIterable {
    case english = "en"
    case chinese = "zh"

    /// The language a tag names (`en`, `en-GB`, `zh`, `zh-CN`, `zh-Hans`; any case), or `nil`
    /// when the page does not speak it.
    public init?(tag: String) {
        let primary = tag.split(separator: "-").first.map { $0.lowercased() } ?? ""
        switch primary {
        case "en": self = .english
        case "zh": self = .chinese
        default: return nil
        }
    }

    /// The first language of an `Accept-Language` header the page speaks, by its `q` weights
    /// (`zh-CN,zh;q=0.9,en;q=0.8`); English when it names none, or there is no header.
    public static func preferred(by header: String?) -> WebLanguage {
        guard let header else { return .english }
        var best: (language: WebLanguage, weight: Double)?
        for (position, entry) in header.split(separator: ",").prefix(32).enumerated() {
            let parts = entry.split(separator: ";").map { String($0).trimmingSpaces }
            guard let tag = parts.first, let language = WebLanguage(tag: tag) else { continue }
            var weight = 1.0
            for parameter in parts.dropFirst() where parameter.hasPrefix("q=") {
                weight = Double(parameter.dropFirst(2)) ?? 0
            }
            // Equal weights: the first named wins (a tiny step down the list).
            weight -= Double(position) * 1e-6
            if weight > 0, weight > (best?.weight ?? 0) { best = (language, weight) }
        }
        return best?.language ?? .english
    }

    /// The document's `lang`.
    public var htmlTag: String { self == .chinese ? "zh-CN" : "en" }

    /// `english` said in this language, `{0}`, `{1}`… replaced by `values` in order. A sentence
    /// the table lacks is said in English (a test checks every one the page uses is there).
    public func callAsFunction(_ english: String, _ values: String...) -> String {
        let template = self == .chinese ? (Self.chineseWords[english] ?? english) : english
        // In one pass: a value that holds "{1}" is not filled in again.
        var said = "", rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            said += rest[..<open]
            let digits = rest[rest.index(after: open)...].prefix { $0.isASCII && $0.isNumber }
            let close = rest.index(open, offsetBy: digits.count + 1, limitedBy: rest.endIndex)
            if let close, close < rest.endIndex, rest[close] == "}", let index = Int(digits), values.indices.contains(index) {
                said += values[index]
                rest = rest[rest.index(after: close)...]
            } else {
                said += "{"
                rest = rest[rest.index(after: open)...]
            }
        }
        return said + rest
    }

    /// A length of time as this language says it: "2 minutes", "2 分钟".
    public func duration(seconds: Int) -> String {
        guard self == .chinese else { return FailureWords.duration(seconds: seconds) }
        return FailureWords.duration(seconds: seconds) { count, unit in
            let name = switch unit {
            case .second: "秒"
            case .minute: "分钟"
            case .hour: "小时"
            case .day: "天"
            }
            return "\(count) \(name)"
        }
    }

    /// Every sentence of the page in Chinese, by its English.
    public static let chineseWords: [String: String] = [
        // The page's frame and parts.
        "Chats": "聊天", "← Chats": "← 聊天", "Chats of {0}": "{0} 的聊天", "Open a jump URL": "打开跳转链接", "Open": "打开", "Open a chat": "打开聊天",
        "Search messages": "搜索消息", "Search": "搜索", "Search the chats of {0}": "搜索 {0} 的聊天", "Results": "结果",
        "No conversations yet. Open a jump URL above.": "还没有聊天。在上方打开一个跳转链接。", "{0} unread": "{0} 条未读", "me: ": "我：",
        "Type words to find the messages that hold all of them.": "输入词语，查找包含全部这些词的消息。",
        "No message holds {0}.": "没有消息包含 {0}。", " and ": " 和 ", "{0} message": "{0} 条消息", "{0} messages": "{0} 条消息", " (the newest)": "（最新的）",
        "Notify me of new messages": "新消息时通知我", "Show message text in notifications": "在通知中显示消息内容",
        "Notices": "通知", "Close": "关闭", "Developer view": "开发者视图", "Opening the chat…": "正在打开聊天…",
        "Page not found": "找不到页面", "There is no page at this address.": "这个地址没有页面。",
        "This address is not right": "这个地址不正确", "The link is incomplete or damaged. Open the chat again from your chats.": "链接不完整或已损坏。请从聊天列表重新打开。",
        "Not allowed": "不允许", "This page cannot be opened this way. Open it from your chats.": "不能这样打开这个页面。请从聊天列表打开。",
        "Too large": "太大", "What was sent is larger than this page takes.": "发送的内容超出了这个页面能接收的大小。",
        "Too many chats open": "打开的聊天太多", "Close a chat you are not using, then open this one again.": "关闭一个不用的聊天，然后重新打开这个。",
        "Something went wrong": "出了点问题", "The page could not be shown.": "无法显示这个页面。", "Details": "详情", "Back to your chats": "返回聊天列表",
        "Search for at most {0} characters.": "最多搜索 {0} 个字符。", "The messages could not be searched: {0}": "无法搜索消息：{0}",
        // The chat page.
        "Pinned": "置顶", "Quick replies": "快捷回复", "Tools": "工具", "Menu": "菜单", "Messages": "消息", "Write a message": "写消息",
        "Message": "消息", "Send": "发送", "Send a file": "发送文件", "This page has no input bar.": "这个页面没有输入栏。",
        "No messages yet.": "还没有消息。", "Show {0} earlier message": "显示更早的 {0} 条消息", "Show {0} earlier messages": "显示更早的 {0} 条消息",
        "This does nothing in this chat.": "在这个聊天中没有作用。", "This does nothing in this chat": "在这个聊天中没有作用",
        "Photo": "照片", "Voice": "语音", "Location": "位置", "Video": "视频", "Report": "举报", "Block": "屏蔽", "Unblock": "取消屏蔽", "Clear": "清空",
        "You": "我", "you": "我", "sent earlier": "较早发送", "You recalled a message": "你撤回了一条消息", "{0} recalled a message": "{0} 撤回了一条消息",
        "Unsupported message type": "暂不支持的消息类型", "This app cannot show this kind of message yet.": "这个应用还不能显示这类消息。",
        "{0}'s app cannot show this message.": "{0} 的应用无法显示这条消息。",
        "{0}'s app has no {1} line: {0} will see its cards as a placeholder.": "{0} 的应用没有 {1} 业务线：{0} 只会看到这类卡片的占位消息。",
        "Reply": "回复", "React": "回应", "Recall": "撤回", "Reactions": "回应",
        "Reply to {0}: {1}. Go to that message": "回复 {0}：{1}。转到那条消息",
        "Photo: {0}": "照片：{0}", "Voice {0}": "语音 {0}", "Location: {0}": "位置：{0}", "File: {0}": "文件：{0}", "Picture": "图片",
        "Recalled message": "已撤回的消息", "A message this app cannot show": "这个应用无法显示的消息", "A message not on this device": "不在这台设备上的消息",
        "No valid position": "位置无效", "Open map": "打开地图", "Voice message, {0}": "语音消息，{0}", "Voice not shown: {0}": "语音无法显示：{0}",
        "Voice message · {0}": "语音消息 · {0}", "File not offered: {0}": "文件无法提供：{0}", "File {0} (not on this device)": "文件 {0}（不在这台设备上）",
        "PDF": "PDF", "Document": "文档", "Spreadsheet": "表格", "Slides": "幻灯片", "ZIP archive": "ZIP 压缩包", "Text": "文本", "File": "文件",
        "Photo from {0}": "{0} 发来的照片", "Photo from {0}, {1}": "{0} 发来的照片，{1}", "Photo not shown: {0}": "照片无法显示：{0}",
        "No picture \"{0}\": its line registered none by that name": "没有图片“{0}”：业务线没有注册这个名字的图片",
        "queued": "排队中", "sent": "已发送", "delivered": "已送达", "read": "已读", "not sent": "未发送", "not known yet": "尚不清楚", "received": "已接收",
        "Try again": "重试", "Show more": "显示更多",
        // Why a message was not sent.
        "{0}'s imhost is older than yours and cannot take it; retry once {0} has updated": "{0} 的 imhost 比你的旧，无法接收；等 {0} 更新后重试",
        "{0} blocked you": "{0} 屏蔽了你", "{0} takes no more messages from you today; retry tomorrow": "{0} 今天不再接收你的消息；明天重试",
        "too large for {0}'s imhost{1}": "对 {0} 的 imhost 来说太大{1}", "refused by {0} ({1}){2}": "被 {0} 拒绝（{1}）{2}", "refused by {0}{1}": "被 {0} 拒绝{1}",
        "too large for the server: it takes up to {0}, this is {1}; retry once its operator has raised the limit": "对服务器来说太大：它最多接收 {0}，这条是 {1}；等运维提高上限后重试",
        "too large for the server: this is {0}; retry once its operator has raised the limit": "对服务器来说太大：这条是 {0}；等运维提高上限后重试",
        "not delivered within {0} hours": "{0} 小时内未送达",
        "this imhost does not know the state \"{0}\" the store holds": "这个 imhost 不认识存储中的状态“{0}”",
        "for a reason this imhost does not know (\"{0}\", stored by a newer one)": "原因是这个 imhost 不认识的（“{0}”，由更新的版本存储）",
        // Notices.
        "You blocked {0}. Their messages will not reach you.": "你屏蔽了 {0}。对方的消息不会再送达你。",
        "You unblocked {0}. Their new messages will reach you.": "你取消屏蔽了 {0}。对方的新消息会送达你。",
        "Chat cleared on this device: {0} message removed. Your other devices keep theirs.": "已在这台设备上清空聊天：删除了 {0} 条消息。你的其他设备保留各自的消息。",
        "Chat cleared on this device: {0} messages removed. Your other devices keep theirs.": "已在这台设备上清空聊天：删除了 {0} 条消息。你的其他设备保留各自的消息。",
        "You reported {0}. The app's team will look at it.": "你举报了 {0}。应用团队会处理。",
        "Your report of {0} is kept on this device: it reaches the app's team once this app is connected to its server.": "你对 {0} 的举报保存在这台设备上：应用连上服务器后会送达应用团队。",
        "Sending again.": "正在重新发送。", "Recalled here. {0}'s app is older and still shows it.": "已在这里撤回。{0} 的应用较旧，仍会显示它。", "Recalled.": "已撤回。",
        "Going online.": "正在上线。", "You are offline. What you send waits until you are back online.": "你已离线。发送的内容会等到你重新上线。",
        "A new message from {0}.": "{0} 发来一条新消息。", "{0} new messages from {1}.": "{1} 发来 {0} 条新消息。",
        "This chat was updated.": "这个聊天已更新。", "This chat could not be updated. Open it again from your chats.": "这个聊天无法更新。请从聊天列表重新打开。",
        "The chat restarted; what you had typed is being sent.": "聊天已重启；你输入的内容正在发送。",
        "Nothing to do here.": "这里没有可做的事。", "That did not work. Try again later.": "没有成功。请稍后再试。",
        "Back online.": "已重新上线。", "Connection lost. Reconnecting…": "连接已断开。正在重新连接…",
        "This chat is open in another window or on another device, so it is offline here.": "这个聊天已在另一个窗口或设备上打开，所以在这里处于离线状态。",
        "This device was removed from your account. Messages no longer reach it.": "这台设备已从你的账号中移除。消息不会再送达它。",
        "Some messages could not be delivered and were given up.": "有些消息无法送达，已放弃。",
        "That is no longer on this page. It may have changed; look again.": "页面上已没有这个。它可能已变化；请再看一下。",
        "Quick replies cannot be sent on this page.": "这个页面不能发送快捷回复。",
        "Not sent: {0}.": "未发送：{0}。", "the message was refused": "消息被拒绝", "Not sent: it could not be saved on this device.": "未发送：无法保存在这台设备上。",
        "Not sent: the photo is larger than {0}.": "未发送：照片大于 {0}。", "a photo may be": "照片允许的大小",
        "Not sent: that file is not a photo that can be sent (PNG, JPEG or WebP).": "未发送：这个文件不是可以发送的照片（PNG、JPEG 或 WebP）。",
        "Not sent: that file cannot be sent ({0}).": "未发送：这个文件无法发送（{0}）。", "Not sent: that file cannot be sent.": "未发送：这个文件无法发送。",
        "Not sent: that recording cannot be sent (at most {0} seconds of Opus sound).": "未发送：这段录音无法发送（最多 {0} 秒的 Opus 声音）。",
        "This chat cannot be used. Open it again from your chats.": "这个聊天无法使用。请从聊天列表重新打开。",
        "Something went wrong with this chat; it goes on as before.": "这个聊天出了点问题；它会照常继续。",
        "Only the sender can recall a message.": "只有发送者可以撤回消息。",
        "Too late to recall: a message can be recalled within {0} of sending it.": "太晚了，无法撤回：消息只能在发送后 {0} 内撤回。",
        "That message was recalled already.": "那条消息已经撤回了。", "That message was recalled: there is nothing to reply to.": "那条消息已撤回：没有可回复的内容。",
        "That message was recalled.": "那条消息已撤回。", "That is not a reaction this chat offers.": "这个聊天没有这种回应。",
        "Part of this chat stopped working and was started again.": "这个聊天的一部分停止了工作，已重新启动。",
        "This chat stopped. Open it again from your chats.": "这个聊天已停止。请从聊天列表重新打开。",
        "Not sent: this file is not a photo that can be sent ({0}).": "未发送：这个文件不是可以发送的照片（{0}）。",
        "Not sent: this file cannot be sent ({0}).": "未发送：这个文件无法发送（{0}）。",
        "Not sent: this recording cannot be sent ({0}).": "未发送：这段录音无法发送（{0}）。",
        "(required)": "（必填）", "Not sent: this card changed since you filled it in. Look at it again.": "未发送：你填写之后这张卡片已更改。请再看一下。", "updated by {0} at {1}": "{0} 于 {1} 更新", "Not sent: some answers on the card need a change.": "未发送：卡片上有些回答需要修改。",
        "Fill this in.": "请填写。", "Write at least {0} characters.": "请至少写 {0} 个字。", "Write at most {0} characters.": "最多写 {0} 个字。",
        "Choose one of the options.": "请从选项中选择。", "Give a date.": "请给出日期。", "Give a time.": "请给出时间。",
        "Choose {0} or later.": "请选择 {0} 或更晚。", "Choose {0} or earlier.": "请选择 {0} 或更早。", "Choose one.": "请只选一个。",
        "This value cannot be used.": "这个值不能使用。",
    ]
}
