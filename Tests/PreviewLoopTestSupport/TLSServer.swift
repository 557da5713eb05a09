import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An https server on 127.0.0.1 (Python's `ssl` around its file server) with a certificate made
/// for the test by `openssl`: one for `CN=evil.invalid` (self-signed, the wrong name), or one for
/// IP 127.0.0.1 (self-signed: trusted only through `--ca-file`).
package final class TLSServer {
    package let port: Int
    /// The certificate, a PEM file (an authority to trust with `--ca-file`).
    package let certificate: String
    private let process: Process

    static let script = """
    import http.server, ssl, sys, os
    os.chdir(sys.argv[1])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[2], sys.argv[3])
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print("port", server.server_address[1], flush=True)
    server.serve_forever()
    """

    package init(directory: String, subject: String, alternativeName: String?) throws {
        certificate = directory + "/cert.pem"
        let key = directory + "/key.pem"
        var arguments = ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate,
                         "-days", "2", "-subj", subject]
        if let alternativeName { arguments += ["-addext", "subjectAltName=" + alternativeName] }
        let made = try Child.run("/usr/bin/openssl", arguments)
        guard made.status == 0 else { throw OracleError(message: "openssl: \(made.stderr)") }
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-u", "-c", Self.script, directory, certificate, key]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first line (read to its newline: a pipe may hand it over in pieces).
        var line = ""
        while !line.contains("\n") {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            line += String(decoding: data, as: UTF8.self)
        }
        guard line.hasPrefix("port "), let port = Int(line.dropFirst(5).prefix { $0 != "\n" }) else {
            process.terminate()
            throw OracleError(message: "the TLS test server did not start: \(line)")
        }
        self.port = port
    }

    package func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
