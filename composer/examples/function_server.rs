//! Serves the built-in function over plaintext gRPC, as a function run with `--insecure`
//! does, until Ctrl-C:
//!
//! ```sh
//! cargo run -p composer --example function_server -- 127.0.0.1:9443
//! ```
//!
//! `crossplane render` reaches it through a Function annotated
//! `render.crossplane.io/runtime: Development` (and
//! `render.crossplane.io/runtime-development-target: 127.0.0.1:9443`).

use std::net::SocketAddr;
use std::process::ExitCode;

use composer::function::FunctionServer;
use composer::function::builtin::Resources;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let arg = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:9443".to_owned());
    let Ok(address) = arg.parse::<SocketAddr>() else {
        eprintln!("function_server: {arg:?} is not an address such as 127.0.0.1:9443");
        return ExitCode::from(2);
    };
    let server = match FunctionServer::bind(address, Resources).await {
        Ok(server) => server,
        Err(e) => {
            eprintln!("function_server: cannot listen on {address}: {e}");
            return ExitCode::from(2);
        }
    };
    println!("serving the built-in function on {}", server.address());
    let _ = tokio::signal::ctrl_c().await;
    server.shutdown().await;
    ExitCode::SUCCESS
}
