

pub use crate::types::_vpc_ipv6_cidr_block_association::VpcIpv6CidrBlockAssociation;

pub use crate::types::_vpc_cidr_block_association::VpcCidrBlockAssociation;

pub use crate::types::_vpc::Vpc;

pub use crate::types::_vpc_encryption_control_configuration::VpcEncryptionControlConfiguration;

pub use crate::types::_tenancy::Tenancy;

pub use crate::types::_vpc_encryption_control::VpcEncryptionControl;

pub use crate::types::_attribute_boolean_value::AttributeBooleanValue;

pub use crate::types::_vpc_encryption_control_exclusion_state_input::VpcEncryptionControlExclusionStateInput;

pub use crate::types::_vpc_encryption_control_mode::VpcEncryptionControlMode;

pub use crate::types::_tag_specification::TagSpecification;

pub use crate::types::_ipv6_address_attribute::Ipv6AddressAttribute;

pub use crate::types::_ip_source::IpSource;

pub use crate::types::_vpc_cidr_block_state::VpcCidrBlockState;

pub use crate::types::_tag::Tag;

pub use crate::types::_block_public_access_states::BlockPublicAccessStates;

pub use crate::types::_vpc_state::VpcState;

pub use crate::types::_vpc_encryption_control_state::VpcEncryptionControlState;

pub use crate::types::_vpc_encryption_control_exclusions::VpcEncryptionControlExclusions;

pub use crate::types::_filter::Filter;

pub use crate::types::_tag_description::TagDescription;

pub use crate::types::_resource_type::ResourceType;

pub use crate::types::_vpc_cidr_block_state_code::VpcCidrBlockStateCode;

pub use crate::types::_block_public_access_mode::BlockPublicAccessMode;

pub use crate::types::_vpc_encryption_control_exclusion::VpcEncryptionControlExclusion;

pub use crate::types::_vpc_encryption_control_exclusion_state::VpcEncryptionControlExclusionState;

mod _attribute_boolean_value;

mod _block_public_access_mode;

mod _block_public_access_states;

mod _filter;

mod _ip_source;

mod _ipv6_address_attribute;

mod _resource_type;

mod _tag;

mod _tag_description;

mod _tag_specification;

mod _tenancy;

mod _vpc;

mod _vpc_cidr_block_association;

mod _vpc_cidr_block_state;

mod _vpc_cidr_block_state_code;

mod _vpc_encryption_control;

mod _vpc_encryption_control_configuration;

mod _vpc_encryption_control_exclusion;

mod _vpc_encryption_control_exclusion_state;

mod _vpc_encryption_control_exclusion_state_input;

mod _vpc_encryption_control_exclusions;

mod _vpc_encryption_control_mode;

mod _vpc_encryption_control_state;

mod _vpc_ipv6_cidr_block_association;

mod _vpc_state;

/// Builders
pub mod builders;
