import FaultlineCore
import NIOCore
import NIOPosix
import NIOSSL
import Pipeline
import Synchronization

/// Where and how alert mail is sent (`faultline serve --smtp-host …`, docs/email.md).
public struct SMTPSettings: Sendable {
    /// How the connection is protected.
    public enum Security: String, Sendable, CaseIterable {
        /// Plain TCP, then `STARTTLS` before anything else; a server that does not offer it gets no mail.
        case starttls
        /// TLS from the first byte (port 465).
        case tls
        /// No TLS at all: only for a relay on the same machine; a password is never sent this way.
        case none
    }
    public var host: String
    public var port: Int
    public var security: Security
    public var username: String?
    public var password: String?
    /// The envelope sender and the `From:` address.
    public var from: MailAddress
    /// The name `From:` shows.
    public var fromName: String
    /// A PEM file of certificates trusted besides the system's (a private CA, or a relay's self-signed certificate).
    public var caFile: String?
    /// How long a connection, and each reply after it, may take.
    public var timeout: TimeAmount

    public init(
        host: String, port: Int, security: Security, username: String?, password: String?, from: MailAddress,
        fromName: String = "Faultline", caFile: String? = nil, timeout: TimeAmount = .seconds(30)
    ) {
        self.host = host
        self.port = port
        self.security = security
        self.username = username
        self.password = password
        self.from = from
        self.fromName = fromName
        self.caFile = caFile
        self.timeout = timeout
    }

    /// Whether `host` names this machine (where a relay without TLS is acceptable).
    var isLoopback: Bool { host == "localhost" || host == "::1" || host.hasPrefix("127.") }
    /// Whether `host` is an address literal rather than a name (no SNI, the certificate must name the address).
    var isAddressLiteral: Bool { host.contains(":") || host.allSatisfy { $0 == "." || $0.isASCII && $0.isNumber } }
}

/// An SMTP client on SwiftNIO: one connection per mail (alert mail is rare; a pool would only hold connections a
/// server closes after a minute anyway).
///
/// Every byte the server sends goes through ``SMTPReplyParser``: bounded lines and replies, codes checked, and each
/// reply must be the one the step expects. After `STARTTLS`, bytes the server sent before the handshake are refused
/// (a man in the middle could otherwise inject replies that the client would read as coming from inside TLS).
public struct SMTPSender: MailSending {
    public let settings: SMTPSettings
    let tls: NIOSSLContext?

    /// - Throws: when the CA file cannot be read.
    public init(settings: SMTPSettings) throws {
        self.settings = settings
        if settings.security == .none {
            tls = nil
        } else {
            var configuration = TLSConfiguration.makeClientConfiguration()
            if let caFile = settings.caFile { configuration.additionalTrustRoots = [.file(caFile)] }
            tls = try NIOSSLContext(configuration: configuration)
        }
    }

    public var from: MailAddress { settings.from }

    public func send(to: MailAddress, message: [UInt8]) async throws {
        var connection = try await SMTPConnection.open(settings, tls: settings.security == .tls ? tls : nil)
        do {
            try await conversation(&connection, to: to, message: message)
            await connection.quit()
        } catch {
            await connection.close()
            throw error
        }
    }

    func conversation(_ c: inout SMTPConnection, to: MailAddress, message: [UInt8]) async throws {
        try c.expect(try await c.reply(), 220)
        let hello = "EHLO \(settings.from.domain)"
        var features = try c.expect(try await c.command(hello), 250)
        if settings.security == .starttls {
            guard features.lines.dropFirst().contains(where: { $0.uppercased().hasPrefix("STARTTLS") }) else {
                throw MailFailure(.startTLSUnavailable, transient: false, reply: features.summary)
            }
            try c.expect(try await c.command("STARTTLS"), 220)
            guard let tls else { throw MailFailure(.tls, transient: false) }
            try await c.startTLS(tls, serverHostname: settings.isAddressLiteral ? nil : settings.host)
            features = try c.expect(try await c.command(hello), 250)
        }
        if let username = settings.username {
            try await authenticate(&c, features: features, username: username, password: settings.password ?? "")
        }
        try c.expect(try await c.command("MAIL FROM:<\(settings.from)>"), 250)
        try c.expect(try await c.command("RCPT TO:<\(to)>"), 250, 251)
        try c.expect(try await c.command("DATA"), 354)
        try await c.write(Self.dotStuffed(message))
        try c.expect(try await c.reply(), 250)
    }

    /// AUTH PLAIN when offered, else AUTH LOGIN; never over a connection without TLS to another machine.
    func authenticate(_ c: inout SMTPConnection, features: SMTPReply, username: String, password: String) async throws {
        if settings.security == .none && !settings.isLoopback {
            throw MailFailure(.authFailed, transient: false, reply: "refusing to send a password without TLS")
        }
        let mechanisms =
            features.lines.dropFirst().first { $0.uppercased().hasPrefix("AUTH") }.map {
                Set($0.uppercased().split(separator: " ").dropFirst().map(String.init))
            } ?? []
        let b64 = { (text: String) in MailMessage.base64(Array(text.utf8)) }
        let done: SMTPReply
        if mechanisms.contains("PLAIN") {
            done = try await c.command("AUTH PLAIN \(b64("\0\(username)\0\(password)"))")
        } else if mechanisms.contains("LOGIN") {
            try c.expect(try await c.command("AUTH LOGIN"), 334)
            try c.expect(try await c.command(b64(username)), 334)
            done = try await c.command(b64(password))
        } else {
            throw MailFailure(.authFailed, transient: false, reply: "the server offers neither AUTH PLAIN nor LOGIN")
        }
        guard done.code == 235 else {
            throw MailFailure(.authFailed, transient: done.isTransient, reply: done.summary)
        }
    }

    /// The message as DATA carries it: CRLF line ends, a `.` doubled at the start of a line, and the final `.` line.
    static func dotStuffed(_ message: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(message.count + 64)
        var lineStart = true
        var previous: UInt8 = 0
        for byte in message {
            if byte == UInt8(ascii: "\n") && previous != UInt8(ascii: "\r") { out.append(UInt8(ascii: "\r")) }
            if lineStart && byte == UInt8(ascii: ".") { out.append(UInt8(ascii: ".")) }
            out.append(byte)
            lineStart = byte == UInt8(ascii: "\n")
            previous = byte
        }
        if !lineStart { out += Array("\r\n".utf8) }
        out += Array(".\r\n".utf8)
        return out
    }
}

/// One SMTP connection: bytes in through an `AsyncThrowingStream`, replies out of the parser, a timeout per reply.
struct SMTPConnection {
    let channel: any Channel
    var bytes: AsyncThrowingStream<ByteBuffer, any Error>.AsyncIterator
    var parser = SMTPReplyParser()
    let timeout: TimeAmount
    /// The first error the pipeline saw (a failed TLS handshake), which explains a write that failed after it.
    let firstError: FirstError

    /// Connects (and, with `tls`, starts TLS at once).
    static func open(_ settings: SMTPSettings, tls: NIOSSLContext?) async throws -> SMTPConnection {
        let (stream, continuation) = AsyncThrowingStream<ByteBuffer, any Error>.makeStream()
        let firstError = FirstError()
        let hostname = settings.isAddressLiteral ? nil : settings.host
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(settings.timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(
                            try NIOSSLClientHandler(context: tls, serverHostname: hostname))
                    }
                    try channel.pipeline.syncOperations.addHandler(ByteRelay(continuation, firstError: firstError))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: settings.host, port: settings.port).get()
        } catch let error as ChannelError where error == .connectTimeout(settings.timeout) {
            throw MailFailure(.timeout, transient: true, reply: "no connection within the timeout")
        } catch {
            throw MailFailure(.connectionFailed, transient: true, reply: "\(settings.host):\(settings.port): \(error)")
        }
        return SMTPConnection(
            channel: channel, bytes: stream.makeAsyncIterator(), timeout: settings.timeout, firstError: firstError)
    }

    /// The next reply, within the timeout.
    mutating func reply() async throws -> SMTPReply {
        while true {
            if let reply = parser.next() { return reply }
            let timedOut = TimeoutFlag()
            let channel = self.channel
            let timer = channel.eventLoop.scheduleTask(in: timeout) {
                timedOut.set()
                channel.close(promise: nil)
            }
            defer { timer.cancel() }
            let buffer: ByteBuffer?
            do {
                buffer = try await bytes.next()
            } catch {
                if timedOut.isSet { throw MailFailure(.timeout, transient: true) }
                throw failure(error)
            }
            guard let buffer else {
                if timedOut.isSet { throw MailFailure(.timeout, transient: true, reply: "no reply within the timeout") }
                throw MailFailure(.connectionFailed, transient: true, reply: "the server closed the connection")
            }
            do throws(SMTPReplyProblem) {
                try parser.feed(buffer.readableBytesView)
            } catch {
                throw MailFailure(.badReply, transient: true, reply: error.rawValue)
            }
        }
    }

    /// Checks a reply's code; a reply of another code fails the mail (4xx for now, 5xx for good).
    @discardableResult
    func expect(_ reply: SMTPReply, _ codes: Int...) throws -> SMTPReply {
        guard codes.contains(reply.code) else {
            throw MailFailure(.refused, transient: reply.isTransient, reply: reply.summary)
        }
        return reply
    }

    func write(_ bytes: [UInt8]) async throws {
        do {
            try await channel.writeAndFlush(ByteBuffer(bytes: bytes))
        } catch {
            throw failure(error)
        }
    }

    /// What an I/O error means, by the first error the pipeline saw (a write fails with "closed channel" after a
    /// failed handshake closed it).
    func failure(_ error: any Error) -> MailFailure {
        let cause = firstError.value ?? error
        if cause is NIOSSLError || cause is BoringSSLError {
            return MailFailure(.tls, transient: true, reply: "\(cause)")
        }
        return MailFailure(.connectionFailed, transient: true, reply: "\(cause)")
    }

    /// Sends one command line (no CR or LF of its own reaches the server) and reads its reply.
    mutating func command(_ line: String) async throws -> SMTPReply {
        try await write(Array(line.utf8.filter { $0 != 0x0D && $0 != 0x0A }) + [0x0D, 0x0A])
        return try await reply()
    }

    /// Puts TLS in front of the connection after the server's 220 to STARTTLS.
    mutating func startTLS(_ tls: NIOSSLContext, serverHostname: String?) async throws {
        guard !parser.hasPartialInput else {
            throw MailFailure(.badReply, transient: true, reply: "bytes after the STARTTLS reply, before TLS")
        }
        do {
            try await channel.eventLoop.submit { [channel] in
                try channel.pipeline.syncOperations.addHandler(
                    try NIOSSLClientHandler(context: tls, serverHostname: serverHostname), position: .first)
            }.get()
        } catch {
            throw MailFailure(.tls, transient: true, reply: "\(error)")
        }
    }

    /// Says goodbye (without waiting long for the answer) and closes.
    mutating func quit() async {
        _ = try? await command("QUIT")
        await close()
    }

    func close() async {
        try? await channel.close()
    }
}

/// Set by a reply's timer when it fired.
final class TimeoutFlag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

/// The first error a connection's pipeline caught.
final class FirstError: Sendable {
    private let stored = Mutex<(any Error)?>(nil)
    func note(_ error: any Error) { stored.withLock { if $0 == nil { $0 = error } } }
    var value: (any Error)? { stored.withLock { $0 } }
}

/// Passes every buffer the connection reads to the conversation's stream; the end or an error ends the stream.
final class ByteRelay: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let continuation: AsyncThrowingStream<ByteBuffer, any Error>.Continuation
    let firstError: FirstError
    init(_ continuation: AsyncThrowingStream<ByteBuffer, any Error>.Continuation, firstError: FirstError) {
        self.continuation = continuation
        self.firstError = firstError
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        continuation.yield(unwrapInboundIn(data))
    }
    func channelInactive(context: ChannelHandlerContext) {
        continuation.finish()
        context.fireChannelInactive()
    }
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        firstError.note(error)
        continuation.finish(throwing: error)
        context.close(promise: nil)
    }
}
