import Testing
import PreviewLoopTestSupport
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs

/// `serve --cache` given twice (a folder and an `s3://` location, in either order), S3's bucket naming
/// rules, the prefix rule and the options that need a shared cache.
@Suite("serve --cache s3://: the location and its options")
struct SharedCacheOptionTests {
    func serve(_ arguments: [String]) throws -> ServeCommand? {
        guard case .command(let command) = try CommandLineParser.parse(["serve", "--root", "/srv"] + arguments) else { return nil }
        return command as? ServeCommand
    }

    @Test("A folder and a bucket in either order; the bucket alone or with a prefix")
    func locations() throws {
        for arguments in [["--cache", "/var/cache/p", "--cache", "s3://previews/thumbs/"],
                          ["--cache", "s3://previews/thumbs/", "--cache", "/var/cache/p"]] {
            let options = try #require(try serve(arguments))
            #expect(options.cacheDirectory == "/var/cache/p")
            #expect(options.sharedCache == SharedCacheLocation(bucket: "previews", prefix: "thumbs/"))
        }
        #expect(try serve(["--cache", "s3://previews"])?.sharedCache == SharedCacheLocation(bucket: "previews", prefix: ""))
        #expect(try serve(["--cache", "s3://previews/"])?.sharedCache == SharedCacheLocation(bucket: "previews", prefix: ""))
        #expect(try serve(["--cache", "s3://my.bucket-1/a/b/"])?.sharedCache == SharedCacheLocation(bucket: "my.bucket-1", prefix: "a/b/"))
        let plain = try #require(try serve([]))
        #expect(plain.cacheDirectory == nil && plain.sharedCache == nil && plain.sharedCacheTimeout == 1 && !plain.requiresSharedCache)
        let tuned = try #require(try serve(["--cache", "s3://previews/", "--shared-cache-timeout", "0.25", "--require-shared-cache"]))
        #expect(tuned.sharedCacheTimeout == 0.25 && tuned.requiresSharedCache)
        #expect(try serve(["--cache", "/var/cache/p"])?.sharedCache == nil)
    }

    @Test("Usage errors: two buckets, two folders, bad bucket names, no prefix, options without a bucket", arguments: [
        ["--cache", "s3://one-bucket/a/", "--cache", "s3://two-bucket/b/"],
        ["--cache", "s3://one-bucket/a/", "--cache", "s3://one-bucket/b/"],
        ["--cache", "/a", "--cache", "/b"],
        ["--cache", "s3://Previews/"], ["--cache", "s3://pre_views/"], ["--cache", "s3://ab/"],
        ["--cache", "s3://" + String(repeating: "a", count: 64) + "/"], ["--cache", "s3://-previews/"], ["--cache", "s3://previews-/"],
        ["--cache", "s3://pre..views/"], ["--cache", "s3://10.0.0.1/"], ["--cache", "s3:///x/"], ["--cache", "s3://"],
        ["--cache", "s3://previews/thumbs"], ["--cache", "s3://previews//thumbs/"], ["--cache", "s3://previews/../x/"],
        ["--cache", "s3://previews/./"],
        ["--shared-cache-timeout", "2"], ["--require-shared-cache"], ["--cache", "/a", "--require-shared-cache"],
        ["--cache", "s3://previews/", "--shared-cache-timeout", "0"],
    ])
    func usageErrors(_ arguments: [String]) {
        let error = usageError(["serve", "--root", "/srv"] + arguments)
        #expect(error != nil, "\(arguments)")
        #expect(error.map { !$0.message.contains("\n") } == true, "\(String(describing: error?.message))")
    }

    @Test("Help lists the repeatable --cache with s3://, --shared-cache-timeout and --require-shared-cache")
    func help() {
        let help = HelpText.help(for: Subcommand(ServeCommand.self))
        #expect(help.contains("--cache <dir>") && help.contains("s3://BUCKET/PREFIX/"))
        #expect(help.contains("--shared-cache-timeout <time>") && help.contains("--require-shared-cache"))
    }
}
