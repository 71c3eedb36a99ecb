# syntax=docker/dockerfile:1
# The mock cloud API as a static musl binary on distroless/static, running as the
# nonroot user (65532). Build from the repository root: the context is the workspace.
#
#   docker build -f ci/docker/mock-cloud.Dockerfile -t loadtest/mock-cloud:dev .
#
# `cargo xtask kind-images` builds both images and loads them into kind. The binary links
# rustls with ring (no OpenSSL); ring compiles C, hence musl-dev.

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
    cargo build --release --locked -p mock-cloud \
 && install -D -m 0755 target/release/mock-cloud /out/mock-cloud

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/mock-cloud /usr/local/bin/mock-cloud
USER 65532:65532
# Runs the binary in the final image: fails the build if it is not static.
RUN ["/usr/local/bin/mock-cloud", "--version"]
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/mock-cloud"]
