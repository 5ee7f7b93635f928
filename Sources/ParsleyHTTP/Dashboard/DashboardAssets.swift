/// The dashboard's pages, compiled into the binary (`.embedInCode` resources of this target): name -> content type
/// and bytes.
enum DashboardAssets {
    static let files: [String: (type: String, bytes: [UInt8])] = [
        "index.html": ("text/html; charset=utf-8", PackageResources.index_html),
        "style.css": ("text/css; charset=utf-8", PackageResources.style_css),
        "dom.js": ("text/javascript; charset=utf-8", PackageResources.dom_js),
        "api.js": ("text/javascript; charset=utf-8", PackageResources.api_js),
        "values.js": ("text/javascript; charset=utf-8", PackageResources.values_js),
        "app.js": ("text/javascript; charset=utf-8", PackageResources.app_js),
        "browser.js": ("text/javascript; charset=utf-8", PackageResources.browser_js),
        "schema.js": ("text/javascript; charset=utf-8", PackageResources.schema_js),
        "config.js": ("text/javascript; charset=utf-8", PackageResources.config_js),
        "console.js": ("text/javascript; charset=utf-8", PackageResources.console_js),
        "graphql.js": ("text/javascript; charset=utf-8", PackageResources.graphql_js),
        "people.js": ("text/javascript; charset=utf-8", PackageResources.people_js),
        "cloud.js": ("text/javascript; charset=utf-8", PackageResources.cloud_js),
        "push.js": ("text/javascript; charset=utf-8", PackageResources.push_js),
        "logs.js": ("text/javascript; charset=utf-8", PackageResources.logs_js),
        "health.js": ("text/javascript; charset=utf-8", PackageResources.health_js),
        "charts.js": ("text/javascript; charset=utf-8", PackageResources.charts_js),
        "transfer.js": ("text/javascript; charset=utf-8", PackageResources.transfer_js),
    ]
}
