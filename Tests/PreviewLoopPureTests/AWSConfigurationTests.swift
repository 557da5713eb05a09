import Testing
import PreviewLoopRemote

/// Credentials, region and endpoint resolved in the AWS SDKs' order, from a given environment and files
/// (no real environment or home directory is read).
@Suite("AWS configuration resolution")
struct AWSConfigurationTests {
    static let credentialsFile = """
        [default]
        aws_access_key_id = FILEDEFAULT
        aws_secret_access_key = file-default-secret

        # a comment
        [work]
        aws_access_key_id=FILEWORK
        aws_secret_access_key=file-work-secret
        aws_session_token = file-work-token
        """
    static let configFile = """
        [default]
        region = eu-central-1
        [profile work]
        region = ap-south-1
        endpoint_url = http://127.0.0.1:9000/
        [profile onlyconfig]
        aws_access_key_id = CONFIGKEY
        aws_secret_access_key = config-secret
        """

    static func resolve(_ environment: [String: String], files: [String: String]? = nil) -> AWSConfiguration {
        let files = files ?? ["/home/u/.aws/credentials": credentialsFile, "/home/u/.aws/config": configFile]
        return AWSConfiguration.resolve(environment: ["HOME": "/home/u"].merging(environment) { $1 }) { files[$0] }
    }

    @Test("Environment keys come first, with their session token; the region from AWS_REGION before AWS_DEFAULT_REGION")
    func environmentFirst() {
        let resolved = Self.resolve(["AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "env-secret", "AWS_SESSION_TOKEN": "env-token",
                                     "AWS_PROFILE": "work", "AWS_REGION": "us-west-2", "AWS_DEFAULT_REGION": "sa-east-1"])
        #expect(resolved.credentials == .init(accessKeyID: "ENVKEY", secretAccessKey: "env-secret", sessionToken: "env-token"))
        #expect(resolved.region == "us-west-2")
        #expect(Self.resolve(["AWS_DEFAULT_REGION": "sa-east-1"]).region == "sa-east-1")
    }

    @Test("Without environment keys: the profile's credentials file section, its config section's region and endpoint")
    func profiles() {
        let fallback = Self.resolve([:])
        #expect(fallback.credentials == .init(accessKeyID: "FILEDEFAULT", secretAccessKey: "file-default-secret"))
        #expect(fallback.region == "eu-central-1" && fallback.endpoint == nil)
        let work = Self.resolve(["AWS_PROFILE": "work"])
        #expect(work.credentials == .init(accessKeyID: "FILEWORK", secretAccessKey: "file-work-secret", sessionToken: "file-work-token"))
        #expect(work.region == "ap-south-1" && work.endpoint == "http://127.0.0.1:9000")
        let config = Self.resolve(["AWS_PROFILE": "onlyconfig"])
        #expect(config.credentials?.accessKeyID == "CONFIGKEY" && config.region == "us-east-1")
        // Only one of the two environment keys: not used.
        #expect(Self.resolve(["AWS_ACCESS_KEY_ID": "HALF"]).credentials?.accessKeyID == "FILEDEFAULT")
    }

    @Test("AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE move the files; nothing anywhere is anonymous in us-east-1")
    func filesAndAnonymous() {
        let moved = Self.resolve(["AWS_SHARED_CREDENTIALS_FILE": "/etc/creds", "AWS_CONFIG_FILE": "/etc/conf"],
                                 files: ["/etc/creds": "[default]\naws_access_key_id=MOVED\naws_secret_access_key=s\n",
                                         "/etc/conf": "[default]\nregion=eu-north-1\n"])
        #expect(moved.credentials?.accessKeyID == "MOVED" && moved.region == "eu-north-1")
        let nothing = Self.resolve([:], files: [:])
        #expect(nothing.credentials == nil && nothing.region == "us-east-1" && nothing.endpoint == nil)
    }

    @Test("AWS_ENDPOINT_URL_S3 wins over AWS_ENDPOINT_URL, which wins over the profile's; a trailing slash is dropped")
    func endpoints() {
        #expect(Self.resolve(["AWS_ENDPOINT_URL": "http://a:1/", "AWS_ENDPOINT_URL_S3": "http://b:2", "AWS_PROFILE": "work"]).endpoint == "http://b:2")
        #expect(Self.resolve(["AWS_ENDPOINT_URL": "http://a:1/", "AWS_PROFILE": "work"]).endpoint == "http://a:1")
    }
}
