extension FrameSampler {
    /// The clip's contact sheet off the calling thread; see ``contactSheet(_:)``.
    public func contactSheet(_ configuration: ClipContactSheet.Configuration) async throws(PreviewLoopError) -> ClipContactSheet {
        try await detached { sampler throws(PreviewLoopError) in try sampler.contactSheet(configuration) }
    }

    /// The clip's contact sheet off the calling thread, with your drawer, title and size; see
    /// ``contactSheet(_:drawer:name:fileSize:)``.
    public func contactSheet(_ configuration: ClipContactSheet.Configuration, drawer: ContactSheet, name: String,
                             fileSize: Int?) async throws(PreviewLoopError) -> ClipContactSheet {
        try await detached { sampler throws(PreviewLoopError) in
            try sampler.contactSheet(configuration, drawer: drawer, name: name, fileSize: fileSize)
        }
    }
}
