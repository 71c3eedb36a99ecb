//! [`Encode`] for the `apiserver_requests` target's input types, variant by variant in
//! the order their derived `Arbitrary` decodes them.

use super::encode::{Encode, variant, variant_with};
use crate::apiserver::input::{
    Accept, At, Encoding, Endpoint, FromPath, Namespace, Object, Op, Operation, Param, Patch,
    Request, Session,
};
use crate::apiserver::query::{FieldOp, LabelOp, LabelSelector, Requirement};

impl Encode for Session {
    fn encode(&self, out: &mut Vec<u8>) {
        self.flow_control.encode(out);
        self.crd.encode(out);
        // The last field is decoded by `arbitrary_take_rest`: the same items and flags.
        self.requests.encode(out);
    }
}

impl Encode for Request {
    fn encode(&self, out: &mut Vec<u8>) {
        self.wait_ms.encode(out);
        self.op.encode(out);
    }
}

impl Encode for Op {
    fn encode(&self, out: &mut Vec<u8>) {
        const N: u32 = 10;
        match self {
            Op::Create {
                at,
                object,
                encoding,
                query,
            } => variant_with(out, 0, N, &[at, object, encoding, query]),
            Op::Get {
                at,
                name,
                accept,
                query,
            } => variant_with(out, 1, N, &[at, name, accept, query]),
            Op::List { at, accept, query } => variant_with(out, 2, N, &[at, accept, query]),
            Op::Watch { at, query } => variant_with(out, 3, N, &[at, query]),
            Op::Update {
                at,
                name,
                status,
                object,
                query,
            } => variant_with(out, 4, N, &[at, name, status, object, query]),
            Op::Patch {
                at,
                name,
                status,
                patch,
                query,
            } => variant_with(out, 5, N, &[at, name, status, patch, query]),
            Op::Delete {
                at,
                name,
                options,
                query,
            } => variant_with(out, 6, N, &[at, name, options, query]),
            Op::DeleteCollection { at, query } => variant_with(out, 7, N, &[at, query]),
            Op::Discovery(endpoint) => variant_with(out, 8, N, &[endpoint]),
            Op::Any(_) => panic!("requests of any shape hold free text: not encodable"),
        }
    }
}

impl Encode for At {
    fn encode(&self, out: &mut Vec<u8>) {
        self.kind.encode(out);
        self.namespace.encode(out);
    }
}

impl Encode for Namespace {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Namespace::All => variant(out, 0, 5),
            Namespace::Default => variant(out, 1, 5),
            Namespace::KubeSystem => variant(out, 2, 5),
            Namespace::Made => variant(out, 3, 5),
            Namespace::Other(w) => variant_with(out, 4, 5, &[w]),
        }
    }
}

impl<T: Encode> Encode for FromPath<T> {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            FromPath::Path => variant(out, 0, 3),
            FromPath::None => variant(out, 1, 3),
            FromPath::Given(t) => variant_with(out, 2, 3, &[t]),
        }
    }
}

impl Encode for Encoding {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Encoding::Json => variant(out, 0, 3),
            Encoding::Yaml => variant(out, 1, 3),
            Encoding::Protobuf(_) => panic!("protobuf fields hold free bytes: not encodable"),
        }
    }
}

impl Encode for Patch {
    fn encode(&self, out: &mut Vec<u8>) {
        const N: u32 = 5;
        match self {
            Patch::Merge(o) => variant_with(out, 0, N, &[o]),
            Patch::Json(ops) => variant_with(out, 1, N, &[ops]),
            Patch::StrategicMerge(o) => variant_with(out, 2, N, &[o]),
            Patch::Apply { object, anonymous } => variant_with(out, 3, N, &[object, anonymous]),
            Patch::Other(..) => panic!("a patch of any content type holds free bytes"),
        }
    }
}

impl Encode for Accept {
    fn encode(&self, out: &mut Vec<u8>) {
        let index = match self {
            Accept::None => 0,
            Accept::Json => 1,
            Accept::Table => 2,
            Accept::PartialObjectMetadata => 3,
            Accept::Protobuf => 4,
            Accept::Yaml => 5,
            Accept::Other(_) => panic!("an Accept of any text: not encodable"),
        };
        variant(out, index, 7);
    }
}

impl Encode for Endpoint {
    fn encode(&self, out: &mut Vec<u8>) {
        let index = match self {
            Endpoint::Version => 0,
            Endpoint::Healthz => 1,
            Endpoint::Api => 2,
            Endpoint::Apis => 3,
            Endpoint::ApiV1 => 4,
            Endpoint::OpenApi => 5,
            Endpoint::OpenApiCore => 6,
            Endpoint::OpenApiApps => 7,
            Endpoint::Journal => 8,
            Endpoint::Metrics => 9,
        };
        variant(out, index, 10);
    }
}

impl Encode for Object {
    fn encode(&self, out: &mut Vec<u8>) {
        self.api_version.encode(out);
        self.kind.encode(out);
        self.name.encode(out);
        self.generate_name.encode(out);
        self.namespace.encode(out);
        self.labels.encode(out);
        self.annotations.encode(out);
        self.finalizers.encode(out);
        self.resource_version.encode(out);
        self.fields.encode(out);
    }
}

impl Encode for Operation {
    fn encode(&self, out: &mut Vec<u8>) {
        self.op.encode(out);
        self.path.encode(out);
        self.from.encode(out);
        self.value.encode(out);
    }
}

impl Encode for Param {
    fn encode(&self, out: &mut Vec<u8>) {
        const N: u32 = 17;
        match self {
            Param::LabelSelector(s) => variant_with(out, 0, N, &[s]),
            Param::FieldSelector(reqs) => variant_with(out, 1, N, &[reqs]),
            Param::Watch(w) => variant_with(out, 2, N, &[w]),
            Param::ResourceVersion(w) => variant_with(out, 3, N, &[w]),
            Param::ResourceVersionMatch(w) => variant_with(out, 4, N, &[w]),
            Param::Limit(n) => variant_with(out, 5, N, &[n]),
            Param::Continue(_) => panic!("a continue token is free text: not encodable"),
            Param::TimeoutSeconds(n) => variant_with(out, 7, N, &[n]),
            Param::AllowWatchBookmarks(b) => variant_with(out, 8, N, &[b]),
            Param::SendInitialEvents(b) => variant_with(out, 9, N, &[b]),
            Param::DryRun(w) => variant_with(out, 10, N, &[w]),
            Param::FieldManager(w) => variant_with(out, 11, N, &[w]),
            Param::Force(b) => variant_with(out, 12, N, &[b]),
            Param::PropagationPolicy(w) => variant_with(out, 13, N, &[w]),
            Param::Since(n) => variant_with(out, 14, N, &[n]),
            Param::Other(k, v) => variant_with(out, 15, N, &[k, v]),
            Param::Raw(_) => panic!("raw query text is free text: not encodable"),
        }
    }
}

impl Encode for LabelSelector {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            LabelSelector::Requirements(r) => variant_with(out, 0, 2, &[r]),
            LabelSelector::Raw(_) => panic!("a raw selector is free text: not encodable"),
        }
    }
}

impl Encode for Requirement {
    fn encode(&self, out: &mut Vec<u8>) {
        self.key.encode(out);
        self.op.encode(out);
        self.values.encode(out);
    }
}

impl Encode for LabelOp {
    fn encode(&self, out: &mut Vec<u8>) {
        variant(out, *self as u32, 9);
    }
}

impl Encode for FieldOp {
    fn encode(&self, out: &mut Vec<u8>) {
        variant(out, *self as u32, 3);
    }
}

// Building seeds.
