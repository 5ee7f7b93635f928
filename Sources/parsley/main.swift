import ParsleyCloud

// The plain server: no Swift cloud code (webhooks can still be registered at run time).
await Parsley.main(cloud: CloudCode())
