import AppCloud

/// Parsley with this app's cloud code; configured like `parsley serve` (flags, PARSE_SERVER_* variables, config file).
@main
enum AppServer {
    static func main() async {
        var cloud = CloudCode()
        AppCloud.register(in: &cloud)
        await Parsley.main(cloud: cloud)
    }
}
