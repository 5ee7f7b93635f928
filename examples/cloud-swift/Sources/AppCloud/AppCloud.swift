@_exported import ParsleyServer

/// The apps' cloud code: Glimp's four notifications and Social Fitness's deadline alert.
public enum AppCloud {
    public static func register(in cloud: inout CloudCode) {
        Glimp.register(&cloud)
        SocialFitness.register(&cloud)
    }
}
