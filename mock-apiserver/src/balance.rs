//! [`balance`]: a TCP load balancer in front of an API server's replicas on one machine,
//! as a cloud load balancer stands in front of a control plane.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::net::{TcpListener, TcpStream};

/// Spreads the connections accepted on `listener` over `backends`, each to the next in
/// turn (round robin; a backend that refuses is skipped for the next), copying bytes both
/// ways until either side closes, until `shutdown` completes. It balances connections,
/// not requests, as a TCP (layer 4) load balancer in front of kube-apiservers does: a
/// client's kept-alive connection stays on one replica, and a client with several
/// connections (a watch holds one) talks to several.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let server = mock_apiserver::ApiServer::default();
/// let mut backends = Vec::new();
/// for replica in [server.clone(), server.replica()] {
///     let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
///     backends.push(listener.local_addr().unwrap());
///     tokio::spawn(mock_apiserver::serve(listener, replica, std::future::pending()));
/// }
/// server.set_replica_endpoints(&backends).unwrap();
/// let front = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// tokio::spawn(mock_apiserver::balance(front, backends, std::future::pending()));
/// # });
/// ```
pub async fn balance(
    listener: TcpListener,
    backends: Vec<SocketAddr>,
    shutdown: impl Future<Output = ()>,
) {
    let next = Arc::new(AtomicUsize::new(0));
    let backends: Arc<[SocketAddr]> = backends.into();
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => return,
            accepted = listener.accept() => accepted,
        };
        let Ok((mut client, _)) = accepted else {
            // One connection's failure (or a full descriptor table, which passes): go on.
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            continue;
        };
        let (next, backends) = (Arc::clone(&next), Arc::clone(&backends));
        tokio::spawn(async move {
            let _ = client.set_nodelay(true);
            for _ in 0..backends.len() {
                let i = next.fetch_add(1, Ordering::Relaxed) % backends.len();
                if let Ok(mut backend) = TcpStream::connect(backends[i]).await {
                    let _ = backend.set_nodelay(true);
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut backend).await;
                    return;
                }
            }
            tracing::warn!("no replica accepted a connection");
        });
    }
}
