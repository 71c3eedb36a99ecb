//! The gRPC codecs of `RunFunction`: protobuf through prost, with a decoding failure kept as
//! the status's source so that the client can tell a malformed answer from a server's error;
//! the client sends a request it encoded before the call ([`EncodedCodec`]).

use std::marker::PhantomData;
use std::sync::Arc;

use bytes::{BufMut, Bytes};
use prost::Message;
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

/// Encodes `E` and decodes `D`: the client's codec is `ProtoCodec<RunFunctionRequest,
/// RunFunctionResponse>`, the server's the other way round.
pub(crate) struct ProtoCodec<E, D>(PhantomData<fn(E) -> D>);

impl<E, D> Default for ProtoCodec<E, D> {
    fn default() -> Self {
        ProtoCodec(PhantomData)
    }
}

impl<E, D> Codec for ProtoCodec<E, D>
where
    E: Message + Send + 'static,
    D: Message + Default + Send + 'static,
{
    type Encode = E;
    type Decode = D;
    type Encoder = ProtoEncoder<E>;
    type Decoder = ProtoDecoder<D>;

    fn encoder(&mut self) -> Self::Encoder {
        ProtoEncoder(PhantomData)
    }

    fn decoder(&mut self) -> Self::Decoder {
        ProtoDecoder(PhantomData)
    }
}

/// Sends a message already encoded (its protobuf bytes) and decodes `D`: the client's codec,
/// so that a call made twice (v1, then v1beta1) encodes its request once.
pub(crate) struct EncodedCodec<D>(PhantomData<fn() -> D>);

impl<D> Default for EncodedCodec<D> {
    fn default() -> Self {
        EncodedCodec(PhantomData)
    }
}

impl<D> Codec for EncodedCodec<D>
where
    D: Message + Default + Send + 'static,
{
    type Encode = Bytes;
    type Decode = D;
    type Encoder = BytesEncoder;
    type Decoder = ProtoDecoder<D>;

    fn encoder(&mut self) -> Self::Encoder {
        BytesEncoder
    }

    fn decoder(&mut self) -> Self::Decoder {
        ProtoDecoder(PhantomData)
    }
}

pub(crate) struct BytesEncoder;

impl Encoder for BytesEncoder {
    type Item = Bytes;
    type Error = Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

pub(crate) struct ProtoEncoder<E>(PhantomData<fn(E)>);

impl<E: Message> Encoder for ProtoEncoder<E> {
    type Item = E;
    type Error = Status;

    fn encode(&mut self, item: E, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        // EncodeBuf grows as needed, so prost's only error (no room left) cannot happen;
        // should it, it is an internal error and not a panic.
        item.encode(dst)
            .map_err(|e| Status::internal(format!("cannot encode the message: {e}")))
    }
}

pub(crate) struct ProtoDecoder<D>(PhantomData<fn() -> D>);

impl<D: Message + Default> Decoder for ProtoDecoder<D> {
    type Item = D;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<D>, Status> {
        match D::decode(src) {
            Ok(message) => Ok(Some(message)),
            Err(e) => {
                let mut status = Status::internal(format!(
                    "malformed {}",
                    std::any::type_name::<D>()
                        .rsplit("::")
                        .next()
                        .unwrap_or("message")
                ));
                status.set_source(Arc::new(e));
                Err(status)
            }
        }
    }
}
