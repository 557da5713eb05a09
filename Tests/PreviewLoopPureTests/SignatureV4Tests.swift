import Testing
import PreviewLoopRemote

/// AWS Signature Version 4 against the worked examples AWS publishes (inputs and expected signatures
/// are data from those documents, not computed here):
/// - the Signature Version 4 test suite (`aws-sig-v4-test-suite`, as carried in awslabs/aws-c-auth's
///   `tests/aws-signing-test-suite/v4/`): `get-vanilla`, `get-vanilla-query-order-key-case`, `get-utf8`
///   and `post-vanilla`, all signed for `AKIDEXAMPLE` at 20150830T123600Z in us-east-1 for `service`;
/// - the Amazon S3 API Reference's "Signature Calculations for the Authorization Header: Transferring
///   Payload in a Single Chunk", its `GET Object` example (the first 10 bytes of
///   `examplebucket/test.txt`, a signed `Range`, 20130524T000000Z).
@Suite("AWS Signature Version 4")
struct SignatureV4Tests {
    static let suiteSigner = SignatureV4(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                                         region: "us-east-1", service: "service")
    static let suiteHeaders = [("Host", "example.amazonaws.com"), ("X-Amz-Date", "20150830T123600Z")]

    @Test("The test suite's requests get its published signatures", arguments: [
        ("GET", "/", [(String, String)](), "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"),
        ("GET", "/", [("Param2", "value2"), ("Param1", "value1")], "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"),
        ("GET", "/" + SignatureV4.encode("\u{1234}"), [], "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85"),
        ("POST", "/", [], "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"),
    ])
    func testSuite(method: String, path: String, query: [(String, String)], expected: String) {
        let authorization = Self.suiteSigner.authorization(method: method, path: path, query: query, headers: Self.suiteHeaders,
                                                           payloadHash: SignatureV4.emptyPayloadHash, amzDate: "20150830T123600Z")
        #expect(authorization == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
            + "SignedHeaders=host;x-amz-date, Signature=\(expected)")
    }

    @Test("get-vanilla's canonical request is the suite's, line for line")
    func canonicalRequest() {
        let request = Self.suiteSigner.canonicalRequest(method: "GET", path: "/", query: [], headers: Self.suiteHeaders,
                                                        payloadHash: SignatureV4.emptyPayloadHash)
        #expect(request.text == "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n"
            + SignatureV4.emptyPayloadHash)
    }

    @Test("The S3 reference's GET Object example (a signed Range) gets its published signature")
    func s3GetObject() {
        let signer = SignatureV4(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                                 region: "us-east-1", service: "s3")
        let headers = [("Host", "examplebucket.s3.amazonaws.com"), ("Range", "bytes=0-9"),
                       ("x-amz-content-sha256", SignatureV4.emptyPayloadHash), ("x-amz-date", "20130524T000000Z")]
        let signed = signer.sign(method: "GET", path: "/test.txt", query: [], headers: headers,
                                 payloadHash: SignatureV4.emptyPayloadHash, amzDate: "20130524T000000Z")
        #expect(signed.signedHeaders == "host;range;x-amz-content-sha256;x-amz-date")
        #expect(signed.signature == "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    @Test("SHA-256 over pieces (a file read part by part) is the digest of the whole, at every split")
    func sha256Pieces() {
        var abc = SHA256.Hasher()
        for piece in ["a", "", "bc"] { abc.update(Array(piece.utf8)) }
        #expect(SHA256.hex(abc.finalize()) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let message = (0..<200).map { UInt8(($0 * 7 + 3) % 256) }
        let whole = SHA256.hash(message)
        for first in [0, 1, 55, 63, 64, 65, 127, 128, 199, 200] {
            for second in [first, min(200, first + 1), min(200, first + 64), 200] {
                var hasher = SHA256.Hasher()
                hasher.update(Array(message[..<first]))
                hasher.update(Array(message[first..<second]))
                hasher.update(Array(message[second...]))
                #expect(hasher.finalize() == whole, "split at \(first), \(second)")
            }
        }
    }

    @Test("x-amz-date is UTC in the basic ISO 8601 form")
    func amzDate() {
        #expect(SignatureV4.amzDate(secondsSince1970: 1_440_938_160) == "20150830T123600Z")
        #expect(SignatureV4.amzDate(secondsSince1970: 0) == "19700101T000000Z")
        #expect(SignatureV4.amzDate(secondsSince1970: 951_782_400) == "20000229T000000Z")
        #expect(SignatureV4.amzDate(secondsSince1970: 1_369_353_600) == "20130524T000000Z")
    }

    @Test("Only unreserved characters stay as they are; a key's slashes stay in a path")
    func encoding() {
        #expect(SignatureV4.encode("a b+c/d~e_f.g-h") == "a%20b%2Bc%2Fd~e_f.g-h")
        #expect(SignatureV4.encode("clips/a b.mp4", keepingSlashes: true) == "clips/a%20b.mp4")
        #expect(SignatureV4.encode("é") == "%C3%A9")
    }
}

/// `s3://BUCKET/KEY`: parsing, addressing (virtual-hosted on AWS, path-style on a custom endpoint) and the
/// store's reason read from its XML error body.
@Suite("S3 object addressing")
struct S3ObjectTests {
    @Test("s3:// names parse; a name without a bucket or key does not")
    func parsing() throws {
        let object = try #require(S3Object("S3://clips/2026/a%20b.mp4"))
        #expect(object.bucket == "clips" && object.key == "2026/a b.mp4")
        #expect(object.description == "s3://clips/2026/a b.mp4")
        #expect(S3Object("s3://clips") == nil && S3Object("s3://clips/") == nil && S3Object("s3:///key") == nil)
        #expect(S3Object("http://clips/a.mp4") == nil)
    }

    @Test("AWS gets virtual-hosted requests unless the bucket name would break the certificate; a custom endpoint path-style")
    func addressing() {
        let object = S3Object(bucket: "clips", key: "a b/c.mp4")
        let aws = object.address(in: AWSConfiguration(credentials: nil, region: "eu-west-1"))
        #expect(aws.url == "https://clips.s3.eu-west-1.amazonaws.com/a%20b/c.mp4" && aws.host == "clips.s3.eu-west-1.amazonaws.com")
        let dotted = S3Object(bucket: "my.clips", key: "c.mp4").address(in: AWSConfiguration(credentials: nil))
        #expect(dotted.url == "https://s3.us-east-1.amazonaws.com/my.clips/c.mp4" && dotted.path == "/my.clips/c.mp4")
        let custom = object.address(in: AWSConfiguration(credentials: nil, endpoint: "http://127.0.0.1:8333"))
        #expect(custom.url == "http://127.0.0.1:8333/clips/a%20b/c.mp4" && custom.host == "127.0.0.1:8333"
            && custom.path == "/clips/a%20b/c.mp4")
    }

    @Test("Signed requests carry the signed headers and a session token; anonymous ones only the range")
    func headers() {
        let object = S3Object(bucket: "clips", key: "c.mp4")
        let anonymous = object.getHeaders(range: "bytes=0-9", configuration: AWSConfiguration(credentials: nil), secondsSince1970: 0)
        #expect(anonymous == ["Range: bytes=0-9"])
        let configuration = AWSConfiguration(credentials: .init(accessKeyID: "AKID", secretAccessKey: "SECRET", sessionToken: "TOKEN"))
        let signed = object.getHeaders(range: "bytes=0-9", configuration: configuration, secondsSince1970: 1_440_938_160)
        #expect(signed.contains("x-amz-security-token: TOKEN") && signed.contains("x-amz-date: 20150830T123600Z"))
        let authorization = signed.first { $0.hasPrefix("Authorization: ") } ?? ""
        #expect(authorization.contains("Credential=AKID/20150830/us-east-1/s3/aws4_request"))
        #expect(authorization.contains("SignedHeaders=host;range;x-amz-content-sha256;x-amz-date;x-amz-security-token"))
        #expect(!authorization.contains("SECRET"))
    }

    @Test("The store's Code and Message are read; the rest of the body (the string to sign) is not")
    func storeError() throws {
        let body = Array("""
            <?xml version="1.0" encoding="UTF-8"?>
            <Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match.</Message>
            <StringToSign>AWS4-HMAC-SHA256 secret-looking</StringToSign><SignatureProvided>abc123</SignatureProvided></Error>
            """.utf8)
        let parsed = try #require(S3Object.storeError(body: body))
        #expect(parsed.code == "SignatureDoesNotMatch" && parsed.message == "The request signature we calculated does not match.")
        #expect(S3Object.storeError(body: Array("<html>oops</html>".utf8)) == nil)
        #expect(S3Object.storeError(body: Array("<Error><Code>Bad\u{1B}[31m</Code></Error>".utf8)) == nil)
    }
}
