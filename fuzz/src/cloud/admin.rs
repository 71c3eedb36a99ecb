//! Calls of the admin API as HTTP parts: journal pages, summary, inventory, reset, and
//! faults and config documents.

use serde_json::{Value, json};

use super::config_yaml;
use super::input::{AdminOp, Class, Faults, Latency};

impl AdminOp {
    /// Method, path, query, and body with its content type.
    pub(crate) fn request(
        &self,
    ) -> (
        &'static str,
        &'static str,
        String,
        (Option<&'static str>, Vec<u8>),
    ) {
        use mock_cloud::admin::{
            CALLS_PATH, CONFIG_PATH, FAULTS_PATH, INVENTORY_PATH, RESET_PATH, SUMMARY_PATH,
        };
        let none = || (None, Vec::new());
        match self {
            AdminOp::Calls { since, limit } => {
                let mut form = form_urlencoded::Serializer::new(String::new());
                if let Some(s) = since {
                    form.append_pair("since", &s.to_string());
                }
                if let Some(l) = limit {
                    form.append_pair("limit", &l.to_string());
                }
                ("GET", CALLS_PATH, form.finish(), none())
            }
            AdminOp::Summary => ("GET", SUMMARY_PATH, String::new(), none()),
            AdminOp::Inventory => ("GET", INVENTORY_PATH, String::new(), none()),
            AdminOp::Reset => ("POST", RESET_PATH, String::new(), none()),
            AdminOp::GetFaults => ("GET", FAULTS_PATH, String::new(), none()),
            AdminOp::PutFaults(f) => (
                "PUT",
                FAULTS_PATH,
                String::new(),
                (Some("application/json"), f.value().to_string().into_bytes()),
            ),
            AdminOp::GetConfig => ("GET", CONFIG_PATH, String::new(), none()),
            AdminOp::PutConfig { setup, aws, tail } => {
                let mut yaml = config_yaml(*setup, *aws);
                yaml.push_str(&tail.0);
                (
                    "PUT",
                    CONFIG_PATH,
                    String::new(),
                    (Some("application/yaml"), yaml.into_bytes()),
                )
            }
        }
    }
}

impl Faults {
    /// The faults document as JSON.
    fn value(&self) -> Value {
        let (seed, latency, errors, outages) = match self {
            Faults::Any(j) => return j.value(),
            Faults::Structured {
                seed,
                latency,
                errors,
                outages,
            } => (seed, latency, errors, outages),
        };
        let class = |c: &Class| match c {
            Class::Read => "read",
            Class::List => "list",
            Class::Mutate => "mutate",
            Class::Delete => "delete",
            Class::Other => "create",
        };
        let mut doc = serde_json::Map::new();
        if let Some(s) = seed {
            doc.insert("seed".into(), json!(s));
        }
        if !latency.is_empty() {
            let by_class: serde_json::Map<String, Value> = latency
                .iter()
                .map(|(c, l)| {
                    let l = match l {
                        Latency::Fixed(ms) => json!({"fixed_ms": ms}),
                        Latency::Uniform(min, max) => {
                            json!({"uniform_ms": {"min": min, "max": max}})
                        }
                        Latency::LogNormal(median, sigma) => {
                            json!({"lognormal_ms": {"median": median, "sigma": sigma}})
                        }
                    };
                    (class(c).to_owned(), l)
                })
                .collect();
            doc.insert("latency".into(), by_class.into());
        }
        if !errors.is_empty() {
            let by_class: serde_json::Map<String, Value> = errors
                .iter()
                .map(|(c, rate, status)| {
                    let rate = f64::from(*rate) / 200.0;
                    (class(c).to_owned(), json!({"rate": rate, "status": status}))
                })
                .collect();
            doc.insert("errors".into(), by_class.into());
        }
        let outages: Vec<Value> = outages
            .iter()
            .map(|(start, end, status)| json!({"start_s": start, "end_s": end, "status": status}))
            .collect();
        doc.insert("outages".into(), outages.into());
        doc.into()
    }
}
