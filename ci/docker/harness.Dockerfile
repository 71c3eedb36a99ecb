# syntax=docker/dockerfile:1
# The harness as a static musl binary on distroless/static, running as the nonroot user
# (65532): the image a sweep's Indexed Job runs (`harness sweep --kubernetes-job`), one
# point a pod. Built with feature `aws`, so a point can leave its results in S3
# (`--results s3://…`; distroless/static carries the CA certificates rustls reads). Build
# from the repository root: the context is the workspace.
#
#   docker build -f ci/docker/harness.Dockerfile -t loadtest/harness:dev .
#
# `cargo xtask kind-images` builds it with the other images and loads them into kind. The
# binary links rustls with ring (no OpenSSL) and mimalloc; both compile C, hence musl-dev.

FROM rust:1.95-alpine AS build
# Alpine drops old package versions, so an apk pin would break later builds; the builder
# image is pinned by its Rust version instead.
# hadolint ignore=DL3018
RUN apk add --no-cache musl-dev
WORKDIR /src
COPY . .
# Symbols stay (readable panics), debug line tables go: a small image.
ENV CARGO_PROFILE_RELEASE_STRIP=debuginfo
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked -p harness --features aws \
 && install -D -m 0755 target/release/harness /out/harness

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/harness /usr/local/bin/harness
USER 65532:65532
# Runs the binary in the final image: fails the build if it is not static.
RUN ["/usr/local/bin/harness", "--version"]
ENTRYPOINT ["/usr/local/bin/harness"]
