import ParsleyServer

/// The plain server: no Swift cloud code (webhooks can still be registered at run time).
@main
enum ParsleyMain {
    static func main() async {
        await Parsley.main(cloud: CloudCode())
    }
}
