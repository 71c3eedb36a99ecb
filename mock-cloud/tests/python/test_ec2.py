"""EC2 round trips through boto3 (with its waiters and paginators) and the AWS CLI: VPCs
with filters, tags and pages, and EC2's own error codes."""

import unittest

import botocore.exceptions

import support


def setUpModule():
    support.start()


def tearDownModule():
    support.stop()


def name_tag(name):
    return [{"ResourceType": "vpc", "Tags": [{"Key": "Name", "Value": name}]}]


class Ec2(unittest.TestCase):
    def setUp(self):
        support.SERVER.put_config({})

    def test_every_vpc_and_tag_operation_round_trips_through_boto3(self):
        ec2 = support.SERVER.client("ec2")
        vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16", TagSpecifications=name_tag("web"))["Vpc"]
        self.assertEqual(vpc["State"], "pending")
        self.assertEqual(vpc["OwnerId"], support.ACCOUNT_ID)
        vpc_id = vpc["VpcId"]
        ec2.get_waiter("vpc_available").wait(VpcIds=[vpc_id], WaiterConfig={"Delay": 0.1})
        found = ec2.describe_vpcs(Filters=[{"Name": "tag:Name", "Values": ["we*"]}])["Vpcs"]
        self.assertEqual([v["VpcId"] for v in found], [vpc_id])
        self.assertEqual(found[0]["Tags"], [{"Key": "Name", "Value": "web"}])

        ec2.modify_vpc_attribute(VpcId=vpc_id, EnableDnsHostnames={"Value": True})
        ec2.create_tags(Resources=[vpc_id], Tags=[{"Key": "team", "Value": "a"}])
        tags = ec2.describe_tags(Filters=[{"Name": "resource-id", "Values": [vpc_id]}])["Tags"]
        self.assertEqual(
            [(t["Key"], t["Value"], t["ResourceType"]) for t in tags],
            [("Name", "web", "vpc"), ("team", "a", "vpc")],
        )
        ec2.delete_tags(Resources=[vpc_id], Tags=[{"Key": "team"}])
        tags = ec2.describe_tags(Filters=[{"Name": "key", "Values": ["team"]}])["Tags"]
        self.assertEqual(tags, [])

        ec2.delete_vpc(VpcId=vpc_id)
        with self.assertRaises(botocore.exceptions.ClientError) as raised:
            ec2.describe_vpcs(VpcIds=[vpc_id])
        error = raised.exception.response["Error"]
        self.assertEqual(error["Code"], "InvalidVpcID.NotFound")
        self.assertEqual(error["Message"], f"The vpc ID '{vpc_id}' does not exist")
        calls = {(c["service"], c["operation"]) for c in support.SERVER.calls()}
        self.assertEqual(len({op for service, op in calls if service == "ec2"}), 7, calls)

    def test_paginators_follow_ec2s_next_tokens(self):
        ec2 = support.SERVER.client("ec2")
        created = sorted(
            ec2.create_vpc(CidrBlock=f"10.{i}.0.0/16", TagSpecifications=name_tag(f"n{i}"))["Vpc"]["VpcId"]
            for i in range(7)
        )
        pages = list(ec2.get_paginator("describe_vpcs").paginate(PaginationConfig={"PageSize": 5}))
        self.assertEqual([len(p["Vpcs"]) for p in pages], [5, 2])
        self.assertEqual([v["VpcId"] for p in pages for v in p["Vpcs"]], created)
        tag_pages = list(ec2.get_paginator("describe_tags").paginate(PaginationConfig={"PageSize": 5}))
        self.assertEqual([len(p["Tags"]) for p in tag_pages], [5, 2])

    def test_bad_input_gets_ec2s_own_codes(self):
        ec2 = support.SERVER.client("ec2")
        cases = [
            (lambda: ec2.create_vpc(CidrBlock="10.0.0.0/8"), "InvalidVpc.Range", 400),
            (lambda: ec2.describe_vpcs(Filters=[{"Name": "colour", "Values": ["x"]}]), "InvalidParameterValue", 400),
            (lambda: ec2.create_vpc(CidrBlock="10.0.0.0/16", DryRun=True), "DryRunOperation", 412),
            (lambda: ec2.delete_vpc(VpcId="vpc-0123456789abcdef0"), "InvalidVpcID.NotFound", 400),
        ]
        for call, code, status in cases:
            with self.subTest(code=code):
                with self.assertRaises(botocore.exceptions.ClientError) as raised:
                    call()
                response = raised.exception.response
                self.assertEqual(response["Error"]["Code"], code)
                self.assertEqual(response["ResponseMetadata"]["HTTPStatusCode"], status)
                self.assertTrue(response["ResponseMetadata"]["RequestId"])
        self.assertTrue(all(c["status"] < 500 for c in support.SERVER.calls()))

    def test_the_aws_cli_creates_filters_and_deletes_vpcs(self):
        vpc = support.SERVER.aws(
            "ec2", "create-vpc", "--cidr-block", "10.0.0.0/16",
            "--tag-specifications", "ResourceType=vpc,Tags=[{Key=Name,Value=cli}]",
        )["Vpc"]
        found = support.SERVER.aws("ec2", "describe-vpcs", "--filters", "Name=tag:Name,Values=cli")
        self.assertEqual([v["VpcId"] for v in found["Vpcs"]], [vpc["VpcId"]])
        support.SERVER.aws("ec2", "create-tags", "--resources", vpc["VpcId"], "--tags", "Key=team,Value=a")
        tags = support.SERVER.aws("ec2", "describe-tags", "--filters", "Name=key,Values=team")
        self.assertEqual([t["ResourceId"] for t in tags["Tags"]], [vpc["VpcId"]])
        support.SERVER.aws("ec2", "delete-vpc", "--vpc-id", vpc["VpcId"])
        self.assertEqual(support.SERVER.aws("ec2", "describe-vpcs")["Vpcs"], [])


if __name__ == "__main__":
    unittest.main()
