import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// A server's connections with their work on the `RequestScheduler`: each connection's task runs on a
/// `ConnectionExecutor`, and its responder marks where each request starts and ends.
struct ScheduledChannel<Base: ServerChildChannel>: ServerChildChannel {
    let base: Base
    let scheduler: RequestScheduler

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Base.Value> {
        base.setup(channel: channel, logger: logger)
    }

    func handle(value: Base.Value, logger: Logger) async {
        let executor = ConnectionExecutor(scheduler: scheduler)
        await withTaskExecutorPreference(executor) {
            await ConnectionExecutor.$serving.withValue(executor) { await base.handle(value: value, logger: logger) }
        }
    }

    /// `responder` with each request's start and end told to the connection's executor.
    static func marking(_ responder: @escaping HTTPChannelHandler.Responder) -> HTTPChannelHandler.Responder {
        return { request, writer, channel in
            let executor = ConnectionExecutor.serving
            executor?.begin()
            defer { executor?.end() }
            try await responder(request, writer, channel)
        }
    }
}

extension HTTPServerBuilder {
    /// A server whose connections are `base`s (given the responder that marks each request) with their work on the
    /// scheduler.
    static func scheduled<Base: ServerChildChannel>(
        on scheduler: RequestScheduler, _ base: @escaping @Sendable (@escaping HTTPChannelHandler.Responder) -> Base
    ) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in ScheduledChannel(base: base(ScheduledChannel<Base>.marking(responder)), scheduler: scheduler) }
    }
}
