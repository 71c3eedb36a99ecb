

pub(crate) fn reflens_describe_tags_output_output_next_token(
    input: &crate::operation::describe_tags::DescribeTagsOutput,
) -> ::std::option::Option<&::std::string::String> {
    let input = match &input.next_token {
        ::std::option::Option::None => return ::std::option::Option::None,
        ::std::option::Option::Some(t) => t,
    };
    ::std::option::Option::Some(input)
}

pub(crate) fn reflens_describe_vpcs_output_output_next_token(
    input: &crate::operation::describe_vpcs::DescribeVpcsOutput,
) -> ::std::option::Option<&::std::string::String> {
    let input = match &input.next_token {
        ::std::option::Option::None => return ::std::option::Option::None,
        ::std::option::Option::Some(t) => t,
    };
    ::std::option::Option::Some(input)
}

pub(crate) fn lens_describe_tags_output_output_tags(
    input: crate::operation::describe_tags::DescribeTagsOutput,
) -> ::std::option::Option<::std::vec::Vec<crate::types::TagDescription>> {
    let input = input.tags?;
    ::std::option::Option::Some(input)
}

pub(crate) fn lens_describe_vpcs_output_output_vpcs(
    input: crate::operation::describe_vpcs::DescribeVpcsOutput,
) -> ::std::option::Option<::std::vec::Vec<crate::types::Vpc>> {
    let input = input.vpcs?;
    ::std::option::Option::Some(input)
}
